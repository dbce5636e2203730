/** The one place where anything thrown below the gateway becomes a protocol error. */
import { InternalError, toSeqlineError, type Logger, type SeqlineError } from '@seqline/core';
import type { GatewayMetrics } from './metrics.ts';

/**
 * Normalises `err` once (toSeqlineError), counts it, and logs it. An INTERNAL error is logged
 * with its cause and replaced by a bare one: its message may describe internals.
 */
export function toClientError(err: unknown, logger: Logger, metrics: GatewayMetrics, context: object): SeqlineError {
  const error = toSeqlineError(err);
  metrics.errors.inc({ code: error.code });
  if (error.code !== 'INTERNAL') {
    logger.debug({ ...context, code: error.code, reason: error.message }, 'request refused');
    return error;
  }
  logger.error({ ...context, err: error.cause ?? error }, 'request failed');
  return new InternalError();
}
