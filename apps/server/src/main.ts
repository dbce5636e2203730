/** `npm start`: the single-process Seqline server on the embedded engine. */
import { pino } from 'pino';
import { failStart, stopOnSignals } from '@seqline/runtime/process';
import { loadServerConfig } from './config.ts';
import { startEmbeddedServer } from './embedded-server.ts';

async function main(): Promise<void> {
  const config = await loadServerConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, redact: ['token', 'req.headers.authorization'] });
  const server = await startEmbeddedServer(config, logger);
  logger.info({ port: server.port, dataDir: config.dataDir }, `seqline listening on http://${config.HOST}:${server.port} (ws /v1/ws)`);
  stopOnSignals(server, logger);
}

main().catch(failStart);
