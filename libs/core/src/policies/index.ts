export * from './types.ts';
export * from './login-policy.ts';
export * from './send-policy.ts';
