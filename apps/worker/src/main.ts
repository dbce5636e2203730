/** A distributed worker process: `node apps/worker/dist/main.js` (built; from source: `node --conditions=source --import tsx apps/worker/src/main.ts`). */
import { pino } from 'pino';
import { failStart, loadDistributedConfig, stopOnSignals } from '@seqline/runtime';
import { startWorker } from './worker.ts';

try {
  const config = loadDistributedConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL });
  const worker = await startWorker(config, logger);
  logger.info({ ownerId: config.SEQLINE_OWNER_ID, shards: config.SEQLINE_SHARDS }, 'seqline worker running');
  stopOnSignals(worker, logger);
} catch (err) {
  failStart(err);
}
