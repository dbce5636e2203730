/** `npm start`: the Seqline server on the embedded engine, in one thread or several (SEQLINE_THREADS). */
import { pino } from 'pino';
import { failStart, stopOnSignals } from '@seqline/runtime/process';
import { loadServerConfig } from './config.ts';
import { startEmbeddedServer } from './embedded-server.ts';
import { startThreadedServer } from './threads-supervisor.ts';

async function main(): Promise<void> {
  const config = await loadServerConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, redact: ['token', 'req.headers.authorization'] });
  if (config.threadsNote !== undefined) logger.info({ threads: 1 }, config.threadsNote);
  // One thread is today's process as it was: no worker thread, the in-process buses.
  if (config.threads === 1) {
    const server = await startEmbeddedServer(config, logger);
    logger.info({ port: server.port, dataDir: config.dataDir }, `seqline listening on http://${config.HOST}:${server.port} (ws /v1/ws)`);
    return stopOnSignals(server, logger);
  }
  const server = await startThreadedServer(config, logger);
  // Printed once, after every thread listens.
  logger.info(
    { port: server.port, dataDir: config.dataDir, threads: server.threads },
    `seqline listening on http://${config.HOST}:${server.port} (ws /v1/ws)`,
  );
  stopOnSignals(server, logger);
  // A thread that cannot start again leaves its shards unserved: stop in order and exit non-zero.
  server.failed.catch((err: unknown) => {
    logger.error({ err }, 'a server thread could not restart; shutting down');
    void server.close().finally(() => process.exit(1));
  });
}

main().catch(failStart);
