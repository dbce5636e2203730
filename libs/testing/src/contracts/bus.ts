/**
 * Contract suite of the WorkQueue port (PushBus's is in push-bus.contract.ts). Every adapter
 * runs it: the local one in embedded mode and the NATS one against a real server. Each test
 * uses fresh queue names, so one shared server (and one shared dead-letter set) serves every test.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Json, JobContext, WorkQueue } from '@seqline/core';
import { eventually, sleep, uniqueName } from './bus-harness.ts';
import { ConcurrencyProbe, keyOfGroup } from './concurrency-probe.ts';
import { workQueueLifecycleCases } from './work-queue-lifecycle.cases.ts';

/**
 * Opens a WorkQueue on the adapter's shared durable backing: a second call is "the same
 * deployment after a restart". The adapter must be configured to retry fast (first retry within
 * ~300 ms) and to dead-letter a job that keeps failing within ~5 s.
 */
export type OpenWorkQueue = () => WorkQueue | Promise<WorkQueue>;

export { eventually, sleep, uniqueName } from './bus-harness.ts';

export function workQueueContract(name: string, open: OpenWorkQueue): void {
  describe(`WorkQueue contract: ${name}`, () => {
    const opened: WorkQueue[] = [];
    const openQueue = async () => {
      const wq = await open();
      opened.push(wq);
      return wq;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((wq) => wq.close()));
    });

    it('runs a job enqueued after consume, once, with its payload, id and attempt 1', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      const calls: [Json, JobContext][] = [];
      await wq.consume({
        queue: q,
        handler: async (payload, ctx) => {
          calls.push([payload, ctx]);
        },
        options: { concurrency: 2 },
      });
      await wq.enqueue({ queue: q, id: `${q}-1`, payload: { hello: 'world', n: [1, 2] } });
      await eventually(() => expect(calls).toHaveLength(1));
      await sleep(300);
      expect(calls).toEqual([
        [
          { hello: 'world', n: [1, 2] },
          { id: `${q}-1`, attempt: 1 },
        ],
      ]);
    });

    it('runs jobs enqueued before consume started', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      for (let i = 0; i < 5; i++) await wq.enqueue({ queue: q, id: `${q}-${i}`, payload: i });
      const seen: Json[] = [];
      await wq.consume({
        queue: q,
        handler: async (payload) => {
          seen.push(payload);
        },
        options: { concurrency: 3 },
      });
      await eventually(() => expect([...seen].sort()).toEqual([0, 1, 2, 3, 4]));
    });

    it('runs a job id enqueued twice while pending only once', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      for (const [id, payload] of [
        ['dup', 'first'],
        ['dup', 'second'],
        ['other', 'other'],
      ])
        await wq.enqueue({ queue: q, id: `${q}-${id}`, payload: payload! });
      const seen: Json[] = [];
      await wq.consume({
        queue: q,
        handler: async (payload) => {
          seen.push(payload);
        },
        options: { concurrency: 4 },
      });
      await eventually(() => expect(seen).toHaveLength(2));
      await sleep(300);
      expect([...seen].sort()).toEqual(['first', 'other']);
    });

    it('never runs more than `concurrency` handlers at once, and does run them in parallel', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      const [probe, done] = [new ConcurrencyProbe(), { n: 0 }];
      await wq.consume({
        queue: q,
        handler: (_p) =>
          probe.around('-', async () => {
            await sleep(30);
            done.n++;
          }),
        options: { concurrency: 4 },
      });
      await Promise.all(Array.from({ length: 24 }, (_, i) => wq.enqueue({ queue: q, id: `${q}-${i}`, payload: i })));
      await eventually(() => expect(done.n).toBe(24));
      expect(probe.maxRunning).toSatisfy((max: number) => max >= 2 && max <= 4);
    });

    it('bounds handlers per key while other keys keep flowing', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      const [probe, done] = [new ConcurrencyProbe(), { n: 0 }];
      const finishedAt = new Map<string, number>(); // group → when its last job finished
      await wq.consume({
        queue: q,
        handler: (payload) => {
          const group = keyOfGroup(payload) ?? '-';
          return probe.around(group, async () => {
            await sleep(25);
            finishedAt.set(group, Date.now());
            done.n++;
          });
        },
        options: { concurrency: 8, keyOf: keyOfGroup, perKeyConcurrency: 3 },
      });
      const groups = [...Array<string>(40).fill('hot'), ...Array<string>(6).fill('cold')];
      // Concurrent enqueues: the hot backlog is all there before the cold jobs arrive.
      await Promise.all(groups.map((group, i) => wq.enqueue({ queue: q, id: `${q}-${i}`, payload: { group } })));
      await eventually(() => expect(done.n).toBe(46), 20_000);
      expect(probe.maxPerKey.get('hot')).toSatisfy((n: number) => n >= 2 && n <= 3);
      expect(probe.maxPerKey.get('cold')).toBeLessThanOrEqual(3);
      // The cold group was not queued behind the hot group's backlog.
      expect(finishedAt.get('cold')!).toBeLessThan(finishedAt.get('hot')!);
    });

    it('reads a function perKeyConcurrency live', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      let [limit, overLimit, running, maxAfterRaise, done] = [1, 0, 0, 0, 0];
      await wq.consume({
        queue: q,
        handler: async () => {
          if (++running > limit) overLimit++;
          if (limit === 4) maxAfterRaise = Math.max(maxAfterRaise, running);
          await sleep(20);
          running--;
          done++;
        },
        options: { concurrency: 10, keyOf: keyOfGroup, perKeyConcurrency: () => limit },
      });
      for (let i = 0; i < 40; i++) await wq.enqueue({ queue: q, id: `${q}-${i}`, payload: { group: 'g' } });
      await eventually(() => expect(done).toBeGreaterThanOrEqual(8));
      limit = 4;
      await eventually(() => expect(done).toBe(40), 20_000);
      expect(overLimit).toBe(0);
      expect(maxAfterRaise).toSatisfy((max: number) => max >= 2 && max <= 4);
    });

    it('retries a failing job with growing attempt numbers until it succeeds', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      const [attempts, succeeded]: [number[], { now?: true }] = [[], {}];
      await wq.consume({
        queue: q,
        handler: async (_p, ctx) => {
          attempts.push(ctx.attempt);
          if (ctx.attempt < 3) throw new Error(`transient ${ctx.attempt}`);
          succeeded.now = true;
        },
        options: { concurrency: 1 },
      });
      await wq.enqueue({ queue: q, id: `${q}-flaky`, payload: 'x' });
      await eventually(() => expect(succeeded.now).toBe(true));
      await sleep(300);
      expect(attempts).toEqual([1, 2, 3]);
      expect((await wq.deadLetters()).filter((job) => job.queue === q)).toEqual([]);
    });

    it('does not hold other jobs behind a failing one', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      const ok: Json[] = [];
      await wq.consume({
        queue: q,
        handler: async (payload) => {
          if (payload === 'bad') throw new Error('always fails');
          ok.push(payload);
        },
        options: { concurrency: 1 },
      });
      await wq.enqueue({ queue: q, id: `${q}-bad`, payload: 'bad' });
      for (let i = 0; i < 5; i++) await wq.enqueue({ queue: q, id: `${q}-${i}`, payload: i });
      await eventually(() => expect(ok).toHaveLength(5));
    });

    it('dead-letters a job that keeps failing; replay runs it again', async () => {
      const [wq, q] = [await openQueue(), uniqueName('q')];
      const id = `${q}-poison`;
      let [failing, calls, succeeded] = [true, 0, false];
      await wq.consume({
        queue: q,
        handler: async () => {
          calls++;
          if (failing) throw new Error('poison');
          succeeded = true;
        },
        options: { concurrency: 2 },
      });
      await wq.enqueue({ queue: q, id, payload: { body: 'p' } });
      const deadOfQueue = async () => (await wq.deadLetters()).filter((job) => job.queue === q);
      await eventually(async () => expect((await deadOfQueue()).map((job) => job.id)).toEqual([id]), 15_000, 100);
      expect((await deadOfQueue())[0]).toMatchObject({
        id,
        queue: q,
        payload: { body: 'p' },
        attempts: expect.toSatisfy((n: number) => n >= 2),
        lastError: expect.stringContaining('poison'),
      });
      const callsWhenDead = calls;
      await sleep(500);
      expect(calls).toBe(callsWhenDead);
      failing = false;
      expect(await wq.replay(id)).toBe(true);
      await eventually(() => expect(succeeded).toBe(true));
      await eventually(async () => expect(await deadOfQueue()).toEqual([]));
      expect([await wq.replay(id), await wq.replay(`${q}-never-existed`)]).toEqual([false, false]);
    });

    workQueueLifecycleCases(openQueue);
  });
}
