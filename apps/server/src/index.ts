export { startEmbeddedServer, type RunningServer } from './embedded-server.ts';
export { ConfigError } from '@seqline/core';
export { loadServerConfig, type ServerConfig } from './config.ts';
