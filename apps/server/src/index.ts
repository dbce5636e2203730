export { startEmbeddedServer, type RunningServer } from './embedded-server.ts';
export { loadServerConfig, ConfigError, type ServerConfig } from './config.ts';
