/** Retry schedule of the local work queue. */
export interface BackoffPolicy {
  /** Delay before the first retry (before jitter). Default 200 ms. */
  initialMs: number;
  /** Cap of one delay. Default 60 s. */
  maxMs: number;
  /** A job failing for longer than this since it was accepted is dead-lettered. Default 30 min. */
  giveUpAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 200,
  maxMs: 60_000,
  giveUpAfterMs: 30 * 60_000,
};

/**
 * Delay before retry number `failures` (1 = after the first failure): exponential, capped,
 * with "equal jitter" — uniformly in [base/2, base] — so retries of jobs that failed together
 * spread out while a retry never comes much earlier than the schedule says.
 */
export function backoffDelay(
  failures: number,
  policy: Pick<BackoffPolicy, 'initialMs' | 'maxMs'>,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, failures - 1);
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(exponent, 52));
  return Math.round(base / 2 + random() * (base / 2));
}
