export interface BackoffOptions {
  /** First delay, ms. */
  initialMs: number;
  /** Cap, ms. */
  maxMs: number;
}

export const DEFAULT_RECONNECT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 30_000 };
export const DEFAULT_BUSY_BACKOFF: BackoffOptions = { initialMs: 200, maxMs: 5_000 };

/**
 * Delay before attempt `attempt` (1-based): exponential, capped, with "equal jitter" (half fixed,
 * half random) so many clients dropped together do not come back in lock-step.
 */
export function backoffDelay(attempt: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const exp = Math.min(opts.maxMs, opts.initialMs * 2 ** Math.max(0, attempt - 1));
  return exp / 2 + random() * (exp / 2);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
