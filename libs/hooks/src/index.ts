export * from './signature.ts';
export * from './http-transport.ts';
