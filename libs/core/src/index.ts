export * from './entry.ts';
export * from './ids.ts';
export * from './errors.ts';
export * from './logger.ts';
export * from './ports.ts';
export * from './tiers.ts';
