/**
 * Waits on the embedded rig's durable job store: a job leaves it only once its handler
 * succeeded, so "no job pending" means every fanout, notify and receipt enqueued so far ran.
 */
import type { EmbeddedRig } from './embedded-rig.ts';

const POLL_MS = 10;

export async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Until the rig's job store holds no pending job (dead letters are not pending: none expected). */
export async function drained(rig: Pick<EmbeddedRig, 'engine'>, timeoutMs = 20_000): Promise<void> {
  await eventually('every job done', async () => (await rig.engine.jobs.list({})).length === 0, timeoutMs);
  const dead = await rig.engine.jobs.listDead();
  if (dead.length > 0) throw new Error(`dead-lettered: ${dead.map((j) => j.id).join(', ')}`);
}
