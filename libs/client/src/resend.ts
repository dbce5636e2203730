import { backoffDelay, sleep, type BackoffOptions } from './backoff.ts';
import { SeqlineClientError } from './errors.ts';
import type { ClientLogger } from './logger.ts';

export interface ResendPolicy {
  maxResends: number;
  busyBackoff: BackoffOptions;
  logger: ClientLogger;
}

/**
 * Runs an idempotent request (a send keyed by its appinfo) until it is answered: an attempt
 * with no answer (timeout, disconnect) is made again, a busy refusal after a backoff, up to
 * `maxResends` more times. Any other error is final.
 */
export async function withResends<T>(attempt: () => Promise<T>, policy: ResendPolicy, what: object): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof SeqlineClientError) || n >= policy.maxResends) throw err;
      if (err.busy) await sleep(backoffDelay(n + 1, policy.busyBackoff));
      else if (!err.unanswered) throw err;
      policy.logger.info({ ...what, attempt: n + 1, code: err.code }, 'seqline: resending');
    }
  }
}
