/** Polling, pausing and naming helpers of the bus contract suites (WorkQueue and PushBus). */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `check` stops throwing (or returns true), failing after `timeoutMs`. */
export async function eventually(check: () => unknown, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await check()) !== false) return;
      if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await sleep(intervalMs);
  }
}

let uniqueCounter = 0;
/** A name unique across tests and runs: only [a-z0-9_] (valid as a NATS token and durable). */
export const uniqueName = (prefix: string): string =>
  `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}_${++uniqueCounter}`;
