/**
 * The retry delay every retrying part of the server follows (the local work queue's jobs, the
 * offline notifier's enqueues): exponential from `initialMs`, capped at `maxMs`.
 */
export interface BackoffSchedule {
  /** Delay before the first retry (before jitter). */
  initialMs: number;
  /** Cap of one delay. */
  maxMs: number;
}

/**
 * Delay before retry number `failures` (1 = after the first failure): exponential, capped,
 * with "equal jitter" — uniformly in [base/2, base] — so retries of work that failed together
 * spread out while a retry never comes much earlier than the schedule says.
 */
export function backoffDelay(failures: number, schedule: BackoffSchedule, random: () => number = Math.random): number {
  const exponent = Math.max(0, failures - 1);
  const base = Math.min(schedule.maxMs, schedule.initialMs * 2 ** Math.min(exponent, 52));
  return Math.round(base / 2 + random() * (base / 2));
}
