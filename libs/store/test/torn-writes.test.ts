/**
 * A thread ended inside a write transaction (torn-writes.ts): lmdb-js commits what the
 * transaction's callback had written when its thread is terminated, so one append can land as
 * an entry without its dedup row or a conversation record without its watermark. A thread that
 * appends to many inboxes is terminated at random moments; after each end its torn writes are
 * rolled back (as the thread supervisor does) and the store must be whole: every stored entry
 * found by its appinfo, every inbox appendable (its index applies the next entry).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dedupKeyOf, inboxKey, type Entry } from '@seqline/core';
import { openEmbeddedEngine, rollBackThreadWrites } from '@seqline/store';

const ROUNDS = 12;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'seqline-torn-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the writer thread for `ms` after it is ready, then terminates it; returns its threadId. */
async function writeThenTerminate(ms: number): Promise<number> {
  const worker = new Worker(new URL('./fixtures/thread-writer.mjs', import.meta.url), {
    workerData: { dir },
    execArgv: ['--conditions=source'],
  });
  const threadId = worker.threadId;
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  await new Promise((r) => setTimeout(r, ms));
  await worker.terminate();
  return threadId;
}

const inboxes = Array.from({ length: 24 }, (_, i) => inboxKey('torn', `u${i}`));

describe('a thread ended inside a write transaction', () => {
  it('has what it tore rolled back: every entry has its dedup row, every inbox takes the next append', async () => {
    let tornRows = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const threadId = await writeThenTerminate(30 + ((round * 37) % 170));
      tornRows += await rollBackThreadWrites({ dir, threadId });
      const engine = await openEmbeddedEngine({ dir, startupChores: false });
      try {
        for (const inbox of inboxes) {
          const head = await engine.timeline.headSeq(inbox);
          const entries = await engine.timeline.readAfter({ inbox, afterSeq: 0, limit: 100_000 });
          expect(entries.length, `${inbox} has no hole`).toBe(head);
          const found = await engine.timeline.findSeqs({ inbox, keys: entries.map(dedupKeyOf) });
          expect(
            entries.filter((e) => found.get(dedupKeyOf(e)) !== e.seq).map((e) => e.seq),
            `${inbox}: entries without their dedup row`,
          ).toEqual([]);
          const next: Entry = {
            seq: head + 1,
            kind: 'msg',
            appinfo: `check-${round}`,
            conv: { type: 'user', id: 'peer0' },
            from: 'peer0',
            sendTime: 1,
            type: 'text',
            body: { text: 'check' },
          };
          await expect(engine.timeline.append({ inbox, entries: [next] }), `${inbox} takes the next append`).resolves.toEqual([
            { seq: head + 1, duplicate: false },
          ]);
        }
      } finally {
        await engine.close();
      }
    }
    console.log(`torn writes: ${tornRows} rows rolled back over ${ROUNDS} terminations`);
    // Terminations land inside a transaction's callback most of the time: the path was taken.
    expect(tornRows).toBeGreaterThan(0);
  }, 180_000);
});
