/**
 * The local work queue's give-up window (backoff.ts, `failuresBeforeGivingUp`), on a simulated
 * clock: it opens at a job's first failed attempt, never at its acceptance, and is counted in
 * attempts, so a job that waited out an outage or saw a clock jump is retried for the whole
 * window; a job whose retries spanned the window is still dead-lettered.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '@seqline/testing';
import { DEFAULT_BACKOFF, failuresBeforeGivingUp } from '../src/index.ts';
import { MemoryJobStore } from './memory-job-store.ts';
import { ManualClock, useLocalQueues } from './local-queue-rig.ts';

describe('local work queue give-up window', () => {
  const make = useLocalQueues();

  it('dead-letters once its retries spanned the window by their schedule, keeping the last error; a replay starts afresh', async () => {
    const jobs = new MemoryJobStore();
    const clock = new ManualClock();
    const backoff = { initialMs: 5, maxMs: 5, giveUpAfterMs: 50 };
    const limit = failuresBeforeGivingUp({ ...DEFAULT_BACKOFF, ...backoff });
    expect(limit).toBe(18); // shortest delay 3 ms: 17 of them pass 50 ms
    const wq = make({ jobs, clock, backoff });
    let calls = 0;
    await wq.consume({
      queue: 'q',
      handler: async () => {
        calls++;
        throw new Error(`boom ${calls}`);
      },
      options: { concurrency: 1 },
    });
    await wq.enqueue({ queue: 'q', id: 'j', payload: { x: 1 } });
    // The clock never moves: the rule counts attempts, it does not read the time.
    await eventually(async () => expect((await wq.deadLetters()).map((j) => j.id)).toEqual(['j']));
    const [dead] = await wq.deadLetters();
    expect(dead).toMatchObject({ attempts: limit, lastError: `boom ${limit}`, firstFailedAt: clock.t });
    expect(calls).toBe(limit);
    expect(jobs.pending.size).toBe(0);
    // Replay: a fresh window, so it runs the whole schedule again before it is buried again.
    clock.t += 1_000;
    expect(await wq.replay('j')).toBe(true);
    expect(jobs.pending.get('j')).toMatchObject({ createdAt: clock.t });
    await eventually(() => expect(calls).toBe(2 * limit));
    await eventually(async () => expect((await wq.deadLetters())[0]).toMatchObject({ attempts: limit, firstFailedAt: clock.t }));
  });

  it('retries a job that waited out a 30-minute outage for its first attempt: the window opens at its first failure', async () => {
    const jobs = new MemoryJobStore();
    const clock = new ManualClock();
    const backoff = { initialMs: 5, maxMs: 5, giveUpAfterMs: 30 * 60_000 };
    // Accepted, then the process stops before any worker ran it.
    const before = make({ jobs, clock, backoff });
    await before.enqueue({ queue: 'q', id: 'j', payload: { hook: 'after-send' } });
    await before.close();
    clock.t += 31 * 60_000; // the outage
    const after = make({ jobs, clock, backoff });
    const attempts: number[] = [];
    let releaseRetry!: () => void;
    const retryGate = new Promise<void>((resolve) => {
      releaseRetry = resolve;
    });
    await after.consume({
      queue: 'q',
      handler: async (_payload, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new Error('hook answered HTTP 500');
        await retryGate;
      },
      options: { concurrency: 1 },
    });
    // The first failure was retried, not buried, and opened the window now, not at acceptance.
    await eventually(() => expect(attempts).toEqual([1, 2]));
    expect(await after.deadLetters()).toEqual([]);
    expect(jobs.pending.get('j')).toMatchObject({ attempts: 1, firstFailedAt: clock.t, lastError: 'hook answered HTTP 500' });
    releaseRetry();
    await eventually(() => expect(jobs.pending.size).toBe(0));
    expect(await after.deadLetters()).toEqual([]);
  });

  it('neither a wait for a worker nor a clock jump shortens the window: buried at the same attempt count', async () => {
    const jobs = new MemoryJobStore();
    const clock = new ManualClock();
    const backoff = { initialMs: 5, maxMs: 5, giveUpAfterMs: 50 };
    const limit = failuresBeforeGivingUp({ ...DEFAULT_BACKOFF, ...backoff });
    const wq = make({ jobs, clock, backoff });
    await wq.enqueue({ queue: 'q', id: 'j', payload: null });
    clock.t += 31 * 60_000; // waited for a worker far longer than the window
    const firstFailure = clock.t;
    let calls = 0;
    await wq.consume({
      queue: 'q',
      handler: async () => {
        calls++;
        if (calls === 2) clock.t += 24 * 3_600_000; // the clock jumps a day ahead mid-schedule
        throw new Error(`down ${calls}`);
      },
      options: { concurrency: 1 },
    });
    await eventually(async () => expect((await wq.deadLetters()).map((j) => j.id)).toEqual(['j']));
    const [dead] = await wq.deadLetters();
    expect(dead).toMatchObject({ attempts: limit, firstFailedAt: firstFailure, lastError: `down ${limit}` });
    expect(calls).toBe(limit);
    expect(jobs.pending.size).toBe(0);
  });
});
