/** Helpers shared by the large-groups tests. */
import { waitFor, type TestClient, type TestServer } from './harness.ts';

/**
 * Runs `attempt` again while the server sheds load (OVERLOADED), as clients are told to: the
 * test machine runs several servers and a 10 000-socket swarm on 2 cores, and a send may well
 * be refused for a moment. Sends are idempotent by appinfo, so retrying is safe.
 */
export async function retryOverloaded<T>(attempt: () => Promise<T>, tries = 100): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      const overloaded = (err as { code?: unknown }).code === 'OVERLOADED' || /OVERLOADED/.test(String(err));
      if (!overloaded || i >= tries) throw err;
      await new Promise((r) => setTimeout(r, Math.min(500, 20 * i)));
    }
  }
}

/** `client.ok(op, args)`, retried while the server answers OVERLOADED. */
export function okRetrying<T = Record<string, unknown>>(client: TestClient, op: string, args: Record<string, unknown>): Promise<T> {
  return retryOverloaded(() => client.ok<T>(op, args));
}

/** Everything queued has run: no pool has a batch running or a job waiting, three polls in a row. */
export async function workersIdle(s: TestServer, timeoutMs = 60_000): Promise<void> {
  let quiet = 0;
  await waitFor(
    () => {
      const busy = Object.values(s.workers.stats().pools).some((p) => p.running > 0 || p.waiting > 0);
      quiet = busy ? 0 : quiet + 1;
      return quiet >= 3;
    },
    timeoutMs,
    'workers idle',
  );
}
