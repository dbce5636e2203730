/** The local work queue on the product JobStore: LMDB via @seqline/store's embedded engine. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@seqline/core';
import type { Json } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import type { EmbeddedEngine } from '@seqline/store';
import { eventually, workQueueContract } from '@seqline/testing';
import { createLocalWorkQueue } from '../src/index.ts';

const root = await mkdtemp(join(tmpdir(), 'seqline-bus-'));
const engine = await openEmbeddedEngine({ dir: join(root, 'contract') });
afterAll(async () => {
  await engine.close();
  await rm(root, { recursive: true, force: true });
});

const fastBackoff = { initialMs: 20, maxMs: 100, giveUpAfterMs: 600 };
workQueueContract('local on the LMDB JobStore', () =>
  createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger, backoff: fastBackoff }),
);

describe('local work queue on LMDB across a real reopen', () => {
  it('resumes pending jobs, with their persisted attempts, after the engine is closed and reopened', async () => {
    const dir = join(root, 'reopen');
    let first: EmbeddedEngine | undefined = await openEmbeddedEngine({ dir });
    const before = createLocalWorkQueue({
      jobs: first.jobs,
      logger: silentLogger,
      backoff: { initialMs: 10, maxMs: 10, giveUpAfterMs: 60_000 },
    });
    let failures = 0;
    await before.consume({
      queue: 'fanout',
      handler: async (payload) => {
        if (payload === 'flaky') {
          failures++;
          throw new Error('not yet');
        }
        await new Promise(() => {}); // "crashes" mid-handler
      },
      options: { concurrency: 4 },
    });
    for (const payload of ['a', 'b', 'flaky']) await before.enqueue({ queue: 'fanout', id: `job-${payload}`, payload });
    await eventually(() => expect(failures).toBeGreaterThanOrEqual(2));
    // Abandon the queue (its handlers never finish) and close the store under it, like a crash.
    // close() is not awaited (it would wait for the hung handlers); it only stops retry timers.
    void before.close();
    await first.close();
    first = undefined;

    const second = await openEmbeddedEngine({ dir });
    try {
      const pending = await second.jobs.list({ queue: 'fanout' });
      expect(pending.map((job) => job.id).sort()).toEqual(['job-a', 'job-b', 'job-flaky']);
      expect(pending.find((job) => job.id === 'job-flaky')!.attempts).toBeGreaterThanOrEqual(1);
      const after = createLocalWorkQueue({ jobs: second.jobs, logger: silentLogger });
      const seen: Json[] = [];
      await after.consume({
        queue: 'fanout',
        handler: async (payload) => {
          seen.push(payload);
        },
        options: { concurrency: 4 },
      });
      await eventually(() => expect([...seen].sort()).toEqual(['a', 'b', 'flaky']));
      await eventually(async () => expect(await second.jobs.list({ queue: 'fanout' })).toEqual([]));
      await after.close();
    } finally {
      await second.close();
    }
  });
});
