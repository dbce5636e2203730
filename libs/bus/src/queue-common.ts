import type { Json, Logger, QueueOptions } from '@seqline/core';
import type { KeyedDispatcher } from './keyed-dispatcher.ts';

/** Live counters of one consumed queue in this process. */
export interface QueueStats {
  /** Handlers running now. */
  running: number;
  /** Jobs ready to run but held back by the pool or their key's bound. */
  waiting: number;
  /** Jobs waiting out a retry backoff (local adapter only; JetStream holds them server-side). */
  delayed: number;
  /** Highest number of handlers running for one key now. */
  maxRunningPerKey: number;
  /** The per-key bound in force now (Infinity when unbounded). */
  perKeyLimit: number;
}

export function statsOf<T>(dispatcher: KeyedDispatcher<T>, delayed: number): QueueStats {
  return {
    running: dispatcher.inFlight,
    waiting: dispatcher.waiting,
    delayed,
    maxRunningPerKey: dispatcher.maxInFlightPerKey,
    perKeyLimit: dispatcher.perKeyLimit(),
  };
}

/** The job's concurrency key; a throwing `keyOf` must not lose the job, so it runs unkeyed. */
export function keyOfPayload(options: QueueOptions, payload: Json, logger: Logger): string | undefined {
  if (!options.keyOf) return undefined;
  try {
    return options.keyOf(payload);
  } catch (err) {
    logger.warn({ err }, 'keyOf threw; running the job without a per-key bound');
    return undefined;
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  try {
    return typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err));
  } catch {
    return String(err);
  }
}
