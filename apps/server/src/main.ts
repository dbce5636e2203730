/** `npm start`: the single-process Seqline server on the embedded engine. */
import { pino } from 'pino';
import { ConfigError, loadServerConfig } from './config.ts';
import { startEmbeddedServer } from './embedded-server.ts';

async function main(): Promise<void> {
  const config = await loadServerConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, redact: ['token', 'req.headers.authorization'] });
  const server = await startEmbeddedServer(config, logger);
  logger.info({ port: server.port, dataDir: config.dataDir }, `seqline listening on http://${config.HOST}:${server.port} (ws /v1/ws)`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight work');
    server.close().then(() => { logger.info({}, 'stopped'); logger.flush(); process.exit(0); }, (err: unknown) => {
      logger.error({ err }, 'shutdown failed');
      logger.flush();
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`seqline failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  }
  process.exit(1);
});
