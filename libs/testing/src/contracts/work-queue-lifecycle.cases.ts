/**
 * The WorkQueue contract's restart and shutdown cases: a new instance resumes what a closed one
 * accepted; close and stopConsuming let running handlers finish and start nothing new. Called
 * by workQueueContract (bus.ts).
 */
import { expect, it } from 'vitest';
import type { Json, WorkQueue } from '@seqline/core';
import { eventually, sleep, uniqueName } from './bus-harness.ts';

/** `openQueue` opens the adapter's queue on its shared backing; the contract closes it after each test. */
export function workQueueLifecycleCases(openQueue: () => Promise<WorkQueue>): void {
  it('a new instance resumes jobs a closed instance accepted', async () => {
    const [first, q] = [await openQueue(), uniqueName('q')];
    for (let i = 0; i < 3; i++) await first.enqueue({ queue: q, id: `${q}-${i}`, payload: i });
    await first.close();
    const second = await openQueue();
    const seen: Json[] = [];
    await second.consume({
      queue: q,
      handler: async (payload) => {
        seen.push(payload);
      },
      options: { concurrency: 2 },
    });
    await eventually(() => expect([...seen].sort()).toEqual([0, 1, 2]));
  });

  it('close waits for running handlers, starts nothing new, and leaves the rest pending', async () => {
    const [first, q] = [await openQueue(), uniqueName('q')];
    const started: Json[] = [];
    let finished = 0;
    for (let i = 0; i < 3; i++) await first.enqueue({ queue: q, id: `${q}-${i}`, payload: i });
    await first.consume({
      queue: q,
      handler: async (payload) => {
        started.push(payload);
        await sleep(200);
        finished++;
      },
      options: { concurrency: 1 },
    });
    await eventually(() => expect(started).toHaveLength(1));
    await first.close();
    expect(finished).toBe(1);
    await sleep(300);
    expect(started).toHaveLength(1);
    const second = await openQueue();
    const rest: Json[] = [];
    await second.consume({
      queue: q,
      handler: async (payload) => {
        rest.push(payload);
      },
      options: { concurrency: 2 },
    });
    await eventually(() => expect([...started, ...rest].sort()).toEqual([0, 1, 2]));
    await sleep(300);
    expect(rest).toHaveLength(2);
  });

  it('stopConsuming: the running handler finishes and still enqueues, nothing new starts; close then refuses enqueues', async () => {
    const [first, q, next] = [await openQueue(), uniqueName('q'), uniqueName('q')];
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const started: Json[] = [];
    for (let i = 0; i < 2; i++) await first.enqueue({ queue: q, id: `${q}-${i}`, payload: i });
    await first.consume({
      queue: q,
      handler: async (payload) => {
        started.push(payload);
        await gate;
        // Handed over after the stop began: the queue still takes it.
        await first.enqueue({ queue: next, id: `${next}-from-${String(payload)}`, payload });
      },
      options: { concurrency: 1 },
    });
    await eventually(() => expect(started).toHaveLength(1));
    const stopped = first.stopConsuming();
    open();
    await stopped;
    expect(started).toEqual([0]);
    await first.enqueue({ queue: next, id: `${next}-late`, payload: 'late' });
    await first.close();
    await expect(first.enqueue({ queue: next, id: `${next}-refused`, payload: 'refused' })).rejects.toThrow();
    const second = await openQueue();
    const [seenNext, seenQ]: [Json[], Json[]] = [[], []];
    await second.consume({ queue: next, handler: async (payload) => void seenNext.push(payload), options: { concurrency: 2 } });
    await second.consume({ queue: q, handler: async (payload) => void seenQ.push(payload), options: { concurrency: 2 } });
    await eventually(() => {
      expect(seenNext.map(String).sort()).toEqual(['0', 'late']);
      expect(seenQ).toEqual([1]);
    });
  });
}
