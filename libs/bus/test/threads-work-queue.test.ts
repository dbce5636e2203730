/**
 * The work queue over threads, on the product JobStore (LMDB). One thread alone runs the
 * WorkQueue contract; two threads joined by a real MessageChannel share one store and split the
 * jobs by place: each job runs once, on its thread, wherever it was enqueued or replayed, and a
 * job stored for a thread that is gone waits in the store for the thread that takes its place.
 */
import { MessageChannel } from 'node:worker_threads';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger, type Json, type StoredJob } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import { eventually, uniqueName, workQueueContract } from '@seqline/testing';
import { createThreadWorkQueue, ThreadHub, type ThreadWorkQueue } from '../src/threads.ts';

const root = await mkdtemp(join(tmpdir(), 'seqline-thread-jobs-'));
const engine = await openEmbeddedEngine({ dir: join(root, 'jobs') });
afterAll(async () => {
  await engine.close();
  await rm(root, { recursive: true, force: true });
});
const fastBackoff = { initialMs: 20, maxMs: 100, giveUpAfterMs: 600 };

workQueueContract('threads: one thread on the LMDB JobStore', () =>
  createThreadWorkQueue({ hub: new ThreadHub({ self: 0 }), threads: 1, jobs: engine.jobs, logger: silentLogger, backoff: fastBackoff }),
);

/** A job as placement sees it: its queue and payload. */
const placed = (queue: string, payload: Json): StoredJob => ({ id: '', queue, payload, attempts: 0, notBefore: 0, createdAt: 0 });
const groupOf = (job: StoredJob): string | undefined => (job.payload as { group?: string } | null)?.group;

/** Thread `self` of two, with its hub; `connect` joins it to the other's hub. */
function threadQueue(self: number, hub = new ThreadHub({ self })): { hub: ThreadHub; queue: ThreadWorkQueue } {
  const queue = createThreadWorkQueue({
    hub,
    threads: 2,
    jobs: engine.jobs,
    logger: silentLogger,
    backoff: fastBackoff,
    placeKeyOf: groupOf,
  });
  return { hub, queue };
}

function joined(a: ThreadHub, b: ThreadHub): void {
  const { port1, port2 } = new MessageChannel();
  a.connect(b.self, port1);
  b.connect(a.self, port2);
}

/** Runs: which thread ran which payload. */
function recorder() {
  const runs: Array<{ thread: number; payload: Json }> = [];
  const consume = (thread: number, queue: ThreadWorkQueue, q: string) =>
    queue.consume({ queue: q, handler: async (payload) => void runs.push({ thread, payload }), options: { concurrency: 4 } });
  return { runs, consume };
}

describe('thread work queue across two threads', () => {
  it('runs each job once, on the thread of its place, whichever thread enqueued it', async () => {
    const [a, b] = [threadQueue(0), threadQueue(1)];
    joined(a.hub, b.hub);
    const q = uniqueName('q');
    const { runs, consume } = recorder();
    await consume(0, a.queue, q);
    await consume(1, b.queue, q);
    const groups = Array.from({ length: 20 }, (_, i) => `g${i}`);
    await Promise.all(groups.map((group, i) => (i % 2 ? a : b).queue.enqueue({ queue: q, id: `${q}-${group}`, payload: { group } })));
    await eventually(() => expect(runs).toHaveLength(20));
    await eventually(async () => expect(await engine.jobs.list({ queue: q })).toEqual([]));
    const ran = new Map(runs.map((r) => [(r.payload as { group: string }).group, r.thread]));
    expect(ran.size).toBe(20);
    for (const group of groups) expect(ran.get(group)).toBe(a.queue.threadOf(placed(q, { group })));
    expect(new Set(ran.values())).toEqual(new Set([0, 1]));
    await Promise.all([a.queue.close(), b.queue.close()]);
    await Promise.all([a.hub.close(), b.hub.close()]);
  });

  it('a job stored for a thread that is gone waits in the store, and runs on the thread that takes its place', async () => {
    const a = threadQueue(0);
    const q = uniqueName('q');
    const { runs, consume } = recorder();
    await consume(0, a.queue, q);
    // Thread 1 is not there: what is placed on it stays pending.
    const jobs = Array.from({ length: 12 }, (_, i) => ({ group: `g${i}` }));
    for (const [i, payload] of jobs.entries()) await a.queue.enqueue({ queue: q, id: `${q}-${i}`, payload });
    const forOne = jobs.filter((p) => a.queue.threadOf(placed(q, p)) === 1).map((p) => p.group);
    expect(forOne.length).toBeGreaterThan(0);
    await eventually(() => expect(runs).toHaveLength(jobs.length - forOne.length));
    expect(runs.every((r) => r.thread === 0)).toBe(true);
    await eventually(async () =>
      expect((await engine.jobs.list({ queue: q })).map((job) => groupOf(job)).sort()).toEqual([...forOne].sort()),
    );
    // Its successor starts: it resumes its share from the store, and is told of what comes next.
    const b = threadQueue(1);
    joined(a.hub, b.hub);
    await consume(1, b.queue, q);
    await eventually(() =>
      expect(
        runs
          .filter((r) => r.thread === 1)
          .map((r) => (r.payload as { group: string }).group)
          .sort(),
      ).toEqual([...forOne].sort()),
    );
    await a.queue.enqueue({ queue: q, id: `${q}-late`, payload: { group: forOne[0]! } });
    await eventually(() => expect(runs.filter((r) => r.thread === 1)).toHaveLength(forOne.length + 1));
    expect(runs).toHaveLength(jobs.length + 1);
    await Promise.all([a.queue.close(), b.queue.close()]);
    await Promise.all([a.hub.close(), b.hub.close()]);
  });

  it('a group stays on one thread: its per-key bound holds for the whole process', async () => {
    const [a, b] = [threadQueue(0), threadQueue(1)];
    joined(a.hub, b.hub);
    const q = uniqueName('q');
    let [running, maxRunning, done] = [0, 0, 0];
    const threadsRun = new Set<number>();
    const handler = (thread: number) => async () => {
      threadsRun.add(thread);
      maxRunning = Math.max(maxRunning, ++running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running--;
      done++;
    };
    const options = { concurrency: 8, keyOf: (p: Json) => (p as { group: string }).group, perKeyConcurrency: 2 };
    await a.queue.consume({ queue: q, handler: handler(0), options });
    await b.queue.consume({ queue: q, handler: handler(1), options });
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).queue.enqueue({ queue: q, id: `${q}-${i}`, payload: { group: 'hot' } })),
    );
    await eventually(() => expect(done).toBe(30));
    expect(threadsRun.size).toBe(1);
    expect(maxRunning).toBe(2);
    await Promise.all([a.queue.close(), b.queue.close()]);
    await Promise.all([a.hub.close(), b.hub.close()]);
  });

  it('a dead job replayed on one thread runs again on its own', async () => {
    const [a, b] = [threadQueue(0), threadQueue(1)];
    joined(a.hub, b.hub);
    const q = uniqueName('q');
    const group = Array.from({ length: 64 }, (_, i) => `g${i}`).find((g) => a.queue.threadOf(placed(q, { group: g })) === 1)!;
    let failing = true;
    const ranOn: number[] = [];
    const handler = (thread: number) => async () => {
      ranOn.push(thread);
      if (failing) throw new Error('poison');
    };
    await a.queue.consume({ queue: q, handler: handler(0), options: { concurrency: 2 } });
    await b.queue.consume({ queue: q, handler: handler(1), options: { concurrency: 2 } });
    await a.queue.enqueue({ queue: q, id: `${q}-poison`, payload: { group } });
    await eventually(async () => expect((await a.queue.deadLetters()).map((job) => job.id)).toContain(`${q}-poison`), 15_000, 100);
    failing = false;
    const before = ranOn.length;
    expect(await a.queue.replay(`${q}-poison`)).toBe(true);
    await eventually(() => expect(ranOn).toHaveLength(before + 1));
    expect(new Set(ranOn)).toEqual(new Set([1]));
    await eventually(async () => expect(await engine.jobs.list({ queue: q })).toEqual([]));
    await Promise.all([a.queue.close(), b.queue.close()]);
    await Promise.all([a.hub.close(), b.hub.close()]);
  });
});
