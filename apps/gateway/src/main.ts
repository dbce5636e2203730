/** A distributed gateway process: `node apps/gateway/dist/main.js` (built; from source: `node --conditions=source --import tsx apps/gateway/src/main.ts`). */
import { pino } from 'pino';
import { failStart, loadDistributedConfig, stopOnSignals } from '@seqline/runtime';
import { startGatewayProcess } from './gateway-process.ts';

try {
  const config = loadDistributedConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, redact: ['token', 'req.headers.authorization'] });
  const proc = await startGatewayProcess(config, logger);
  logger.info({ port: proc.gateway.port }, `seqline gateway listening on http://${config.HOST}:${proc.gateway.port} (ws /v1/ws)`);
  stopOnSignals(proc, logger);
} catch (err) {
  failStart(err);
}
