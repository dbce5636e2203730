/** Port contract suites (vitest): every adapter of a port runs the same suite. */
export * from './contracts/index.ts';
export * from './conversation-history.ts';
export { requireServices, type ServiceProbe } from './services.ts';
export * from './hook-receiver.ts';
export { freePort } from './free-port.ts';
