export * from './types.ts';
export * from './settings.ts';
export * from './errors.ts';
export * from './device-bus.ts';
export * from './before-send.ts';
export * from './notify.ts';
