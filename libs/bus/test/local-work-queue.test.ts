import { describe, expect, it } from 'vitest';
import { silentLogger } from '@seqline/core';
import type { Json } from '@seqline/core';
import { eventually } from '@seqline/testing';
import { backoffDelay, createLocalWorkQueue } from '../src/index.ts';
import { MemoryJobStore } from './memory-job-store.ts';
import { ManualClock, useLocalQueues } from './local-queue-rig.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const group = (payload: Json) => (payload as { group: string }).group;

describe('local work queue', () => {
  const make = useLocalQueues();

  it('persists a job before enqueue resolves, and removes it only after success', async () => {
    const jobs = new MemoryJobStore();
    const wq = make({ jobs });
    await wq.enqueue({ queue: 'fanout', id: 'a', payload: { group: 'g' } });
    expect(jobs.pending.get('a')).toMatchObject({ id: 'a', queue: 'fanout', attempts: 0 });
    let release!: () => void;
    await wq.consume({
      queue: 'fanout',
      handler: () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
      options: { concurrency: 1 },
    });
    await eventually(() => expect(release).toBeTypeOf('function'));
    expect(jobs.pending.has('a')).toBe(true);
    release();
    await eventually(() => expect(jobs.pending.has('a')).toBe(false));
  });

  it('backs off exponentially with jitter, capped, and persists attempts and notBefore', async () => {
    expect(backoffDelay(1, { initialMs: 200, maxMs: 60_000 }, () => 0)).toBe(100);
    expect(backoffDelay(1, { initialMs: 200, maxMs: 60_000 }, () => 1)).toBe(200);
    expect(backoffDelay(4, { initialMs: 200, maxMs: 60_000 }, () => 1)).toBe(1600);
    expect(backoffDelay(40, { initialMs: 200, maxMs: 60_000 }, () => 1)).toBe(60_000);
    expect(backoffDelay(1000, { initialMs: 200, maxMs: 60_000 }, () => 0.5)).toBe(45_000);

    const jobs = new MemoryJobStore();
    const clock = new ManualClock();
    // random() = 1 → delay = the full exponential step: 40, 80, 160 ms.
    const wq = make({ jobs, clock, random: () => 1, backoff: { initialMs: 40, maxMs: 10_000, giveUpAfterMs: 60_000 } });
    const startedAt: number[] = [];
    const notBefores: number[] = [];
    await wq.consume({
      queue: 'q',
      handler: async () => {
        startedAt.push(performance.now());
        if (startedAt.length < 4) {
          throw new Error(`fail ${startedAt.length}`);
        }
      },
      options: { concurrency: 1 },
    });
    const seen = setInterval(() => {
      const job = jobs.pending.get('j');
      if (job && !notBefores.includes(job.notBefore) && job.attempts > 0) notBefores.push(job.notBefore);
    }, 2);
    await wq.enqueue({ queue: 'q', id: 'j', payload: {} });
    await eventually(() => expect(startedAt).toHaveLength(4));
    clearInterval(seen);
    const gaps = startedAt.slice(1).map((t, i) => t - startedAt[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(158);
    expect(notBefores).toEqual([clock.t + 40, clock.t + 80, clock.t + 160]);
    await eventually(() => expect(jobs.pending.size).toBe(0));
  });

  it('never exceeds perKeyConcurrency under a burst of 100 jobs of one key', async () => {
    const jobs = new MemoryJobStore();
    const wq = make({ jobs });
    let running = 0;
    let max = 0;
    let statsMax = 0;
    let done = 0;
    await wq.consume({
      queue: 'q',
      handler: async () => {
        running++;
        max = Math.max(max, running);
        statsMax = Math.max(statsMax, wq.stats().q!.maxRunningPerKey);
        await sleep(Math.random() * 5);
        running--;
        done++;
      },
      options: { concurrency: 50, keyOf: group, perKeyConcurrency: 5 },
    });
    await Promise.all(Array.from({ length: 100 }, (_, i) => wq.enqueue({ queue: 'q', id: `j${i}`, payload: { group: 'big' } })));
    await eventually(() => expect(done).toBe(100));
    expect(max).toBeLessThanOrEqual(5);
    expect(max).toBeGreaterThanOrEqual(2);
    expect(statsMax).toBeLessThanOrEqual(5);
    expect(wq.stats().q).toMatchObject({ running: 0, waiting: 0, delayed: 0, perKeyLimit: 5 });
  });

  it('applies a lowered perKeyConcurrency to jobs started after the change', async () => {
    const jobs = new MemoryJobStore();
    const wq = make({ jobs });
    let limit = 6;
    let running = 0;
    let violations = 0;
    let done = 0;
    await wq.consume({
      queue: 'q',
      handler: async () => {
        running++;
        if (running > limit) violations++;
        await sleep(10);
        running--;
        done++;
      },
      options: { concurrency: 20, keyOf: group, perKeyConcurrency: () => limit },
    });
    for (let i = 0; i < 60; i++) await wq.enqueue({ queue: 'q', id: `j${i}`, payload: { group: 'g' } });
    await eventually(() => expect(done).toBeGreaterThanOrEqual(12));
    limit = 2;
    // Jobs already running may finish above the new bound; wait for them to drain.
    await eventually(() => expect(running).toBeLessThanOrEqual(2));
    violations = 0;
    await eventually(() => expect(done).toBe(60));
    expect(violations).toBe(0);
  });

  it('resumes, after a crash, a job that was mid-handler and one that was waiting out a backoff', async () => {
    const jobs = new MemoryJobStore();
    const crashed = createLocalWorkQueue({
      jobs,
      logger: silentLogger,
      backoff: { initialMs: 60_000, maxMs: 60_000, giveUpAfterMs: 3_600_000 },
    });
    let hung = 0;
    await crashed.consume({
      queue: 'q',
      handler: async (payload) => {
        if (payload === 'fails') throw new Error('first instance fails it');
        hung++;
        await new Promise(() => {}); // never settles: the process "dies" here
      },
      options: { concurrency: 4 },
    });
    await crashed.enqueue({ queue: 'q', id: 'mid', payload: 'hangs' });
    await crashed.enqueue({ queue: 'q', id: 'retry', payload: 'fails' });
    await eventually(() => expect(hung).toBe(1));
    await eventually(() => expect(jobs.pending.get('retry')?.attempts).toBe(1));
    // No close(): the first instance is simply abandoned, as on kill -9.
    const restarted = make({ jobs });
    const seen: string[] = [];
    await restarted.consume({
      queue: 'q',
      handler: async (payload, ctx) => {
        seen.push(`${payload as string}@${ctx.attempt}`);
      },
      options: { concurrency: 4 },
    });
    await eventually(() => expect(seen).toContain('hangs@1'));
    // The retry keeps its persisted notBefore (a minute away): it is delayed, not lost.
    expect(restarted.stats().q!.delayed).toBe(1);
    expect(jobs.pending.has('retry')).toBe(true);
  });

  it('keeps going when the store fails to persist a retry or a removal', async () => {
    const jobs = new MemoryJobStore();
    const wq = make({ jobs, backoff: { initialMs: 5, maxMs: 5, giveUpAfterMs: 60_000 } });
    jobs.failNext = { update: 1, remove: 1 };
    let calls = 0;
    await wq.consume({
      queue: 'q',
      handler: async () => {
        calls++;
        if (calls === 1) throw new Error('once');
      },
      options: { concurrency: 1 },
    });
    await wq.enqueue({ queue: 'q', id: 'j', payload: null });
    await eventually(() => expect(calls).toBe(2));
    // The removal failed: the job stays pending (it would run again after a restart).
    await eventually(() => expect(jobs.pending.has('j')).toBe(true));
    await wq.enqueue({ queue: 'q', id: 'k', payload: null });
    await eventually(() => expect(calls).toBe(3));
    await eventually(() => expect(jobs.pending.has('k')).toBe(false));
  });

  it('runs a job whose keyOf throws, without a key', async () => {
    const jobs = new MemoryJobStore();
    const wq = make({ jobs });
    const seen: Json[] = [];
    await wq.consume({
      queue: 'q',
      handler: async (p) => {
        seen.push(p);
      },
      options: {
        concurrency: 1,
        keyOf: () => {
          throw new Error('bad payload');
        },
        perKeyConcurrency: 1,
      },
    });
    await wq.enqueue({ queue: 'q', id: 'j', payload: 'x' });
    await eventually(() => expect(seen).toEqual(['x']));
  });

  it('rejects enqueue after close, and a second consumer of one queue', async () => {
    const jobs = new MemoryJobStore();
    const wq = make({ jobs });
    await wq.consume({ queue: 'q', handler: async () => {}, options: { concurrency: 1 } });
    await expect(wq.consume({ queue: 'q', handler: async () => {}, options: { concurrency: 1 } })).rejects.toThrow(/already consumed/);
    await wq.close();
    await expect(wq.enqueue({ queue: 'q', id: 'j', payload: null })).rejects.toThrow(/closed/);
    expect(jobs.pending.size).toBe(0);
  });

  it('close cancels backoff timers and waits for a failing handler to persist its retry', async () => {
    const jobs = new MemoryJobStore();
    const wq = make({ jobs, backoff: { initialMs: 50, maxMs: 50, giveUpAfterMs: 60_000 } });
    let calls = 0;
    await wq.consume({
      queue: 'q',
      handler: async () => {
        calls++;
        await sleep(100);
        throw new Error('slow failure');
      },
      options: { concurrency: 1 },
    });
    await wq.enqueue({ queue: 'q', id: 'j', payload: null });
    await eventually(() => expect(calls).toBe(1));
    await wq.close();
    expect(jobs.pending.get('j')).toMatchObject({ attempts: 1, lastError: 'slow failure' });
    await sleep(150);
    expect(calls).toBe(1);
  });
});
