/**
 * Retry schedule of the local work queue, and the give-up rule both work queues follow: a job is
 * dead-lettered once its retries have spanned `giveUpAfterMs` by their schedule, counted in
 * attempts from its first failure — never from when it was accepted, and never by a clock, so a
 * job that waited for a worker (an outage, a backlog) or saw a clock jump still gets its whole
 * window of retries (docs/decisions.md, "The give-up window opens at the first failure").
 */
import { backoffDelay } from '@seqline/core';

export interface BackoffPolicy {
  /** Delay before the first retry (before jitter). Default 200 ms. */
  initialMs: number;
  /** Cap of one delay. Default 60 s. */
  maxMs: number;
  /** A job whose retries spanned this long by their schedule (shortest jitter) is dead-lettered. Default 30 min. */
  giveUpAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 200,
  maxMs: 60_000,
  giveUpAfterMs: 30 * 60_000,
};

// The delay rule itself is core's (one rule for every retry); re-exported for the queues' users.
export { backoffDelay };

/**
 * The lower bound of each retry delay of `backoffDelay` (its jitter never goes below half the
 * base), from the delay after failure 1 until the cap, which then repeats.
 */
export function retryDelayFloors(policy: Pick<BackoffPolicy, 'initialMs' | 'maxMs'>): number[] {
  const floors: number[] = [];
  for (let failures = 1; floors.length < 64; failures++) {
    const floor = backoffDelay(failures, policy, () => 0);
    floors.push(Math.max(1, floor));
    if (floor >= Math.round(policy.maxMs / 2)) break;
  }
  return floors;
}

/**
 * The local queue's give-up rule, the count form both queues share: the number of failed
 * attempts after which a job has been retried on schedule for more than `giveUpAfterMs` even
 * if every jittered delay was its shortest. Counting attempts instead of reading a clock means
 * neither a wait for a worker (an outage, a stopped server) nor a clock jump shortens the window.
 */
export function failuresBeforeGivingUp(policy: BackoffPolicy): number {
  return attemptsSpanning(policy.giveUpAfterMs, retryDelayFloors(policy));
}

/**
 * The same rule for a queue whose retry delays are a fixed list (JetStream, whose messages cannot
 * be rewritten on a retry; it records each job's failures apart): the number of failed attempts after which a job has been failing for
 * more than `giveUpAfterMs` by its retry schedule alone — the smallest n such that the delays
 * after failures 1 … n−1 add up to more than the window. Waiting time before the first attempt
 * is never counted. `delays[k-1]` follows failure k; the last value repeats.
 */
export function attemptsSpanning(giveUpAfterMs: number, delays: readonly number[]): number {
  if (delays.length === 0 || delays.some((ms) => !(ms > 0) || !Number.isFinite(ms))) {
    throw new RangeError('retry delays must be positive and finite');
  }
  let scheduled = 0;
  let attempts = 1;
  for (const delay of delays) {
    if (scheduled > giveUpAfterMs) return attempts;
    scheduled += delay;
    attempts++;
  }
  if (scheduled > giveUpAfterMs) return attempts;
  // The last delay repeats: the fewest more of them that pass the window.
  const last = delays[delays.length - 1]!;
  return attempts + Math.floor((giveUpAfterMs - scheduled) / last) + 1;
}

/**
 * Deliveries of one job that may end without an outcome (its worker killed or stopped mid-job)
 * before the NATS queue parks it unrun: a crash is not a failure of the job, so it does not count
 * toward the give-up rule, but a job that kills every worker that takes it must still stop
 * somewhere. 50 crashes take at least 50 ack waits (25 min with the default 30 s).
 */
export const DEFAULT_MAX_CRASHED_DELIVERIES = 50;

/** What a queue that counts deliveries (JetStream) does with one, given the failures it recorded. */
export type DeliveryVerdict = { run: true } | { run: false; crashed: number };

/**
 * The NATS queue's rule per delivery: the deliveries before this one that did not end in a
 * recorded failure ended without an outcome (crashed); past `maxCrashed` of them the job is
 * parked unrun. Failures alone count toward giving up (`maxFailures`, checked when one fails).
 */
export function deliveryVerdict(input: { deliveries: number; failures: number; maxCrashed: number }): DeliveryVerdict {
  const crashed = Math.max(0, input.deliveries - 1 - input.failures);
  return crashed > input.maxCrashed ? { run: false, crashed } : { run: true };
}
