export * from './signature.ts';
export * from './http-transport.ts';
export * from './call-hook.ts';
