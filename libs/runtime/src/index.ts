export { ConfigError } from '@seqline/core';
export { loadDistributedConfig, distributedEnvSchema, type DistributedConfig } from './config.ts';
export { hookEnvSchema, parseHookDefaults, readHookDefaults, warnUnsignedHooks, type HookDefaultsReading } from './hook-defaults.ts';
export { openDistributedInfra, type DistributedInfra } from './distributed.ts';
export { stopOnSignals, failStart, type Stoppable } from './process.ts';
export { distributedMessagingDeps, type DistributedMessaging } from './messaging-deps.ts';
