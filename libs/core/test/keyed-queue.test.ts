import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KeyedQueue } from '../src/index.ts';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A promise with its resolve in hand. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('KeyedQueue', () => {
  it('runs the tasks of one key one at a time, in submission order, whatever each outcome (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), fails: fc.boolean(), throws: fc.boolean(), waits: fc.nat(3) }), {
          maxLength: 40,
        }),
        async (jobs) => {
          const queue = new KeyedQueue();
          const running = new Map<string, number>();
          const order = new Map<string, number[]>();
          let overlap = false;
          const results = jobs.map((job, i) =>
            queue
              .run(job.key, () => {
                if (job.throws && job.fails) throw new Error(`sync ${i}`);
                return (async () => {
                  running.set(job.key, (running.get(job.key) ?? 0) + 1);
                  if ((running.get(job.key) ?? 0) > 1) overlap = true;
                  order.set(job.key, [...(order.get(job.key) ?? []), i]);
                  for (let w = 0; w < job.waits; w++) await tick();
                  running.set(job.key, (running.get(job.key) ?? 0) - 1);
                  if (job.fails) throw new Error(`failed ${i}`);
                  return i;
                })();
              })
              .then(
                (v) => ({ ok: v }),
                (err: Error) => ({ err: err.message }),
              ),
          );
          const settled = await Promise.all(results);
          await queue.idle();
          expect(overlap).toBe(false);
          for (const [key, seen] of order) {
            const expected = jobs.flatMap((job, i) => (job.key === key && !(job.throws && job.fails) ? [i] : []));
            expect(seen).toEqual(expected);
          }
          settled.forEach((r, i) => expect(r).toEqual(jobs[i]?.fails ? { err: expect.stringContaining(String(i)) } : { ok: i }));
          expect(queue.size).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('runs tasks of different keys at the same time (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.string({ maxLength: 4 }), { minLength: 1, maxLength: 20 }), async (keys) => {
        const queue = new KeyedQueue();
        const held = gate();
        const started: string[] = [];
        const all = keys.map((key) =>
          queue.run(key, async () => {
            started.push(key);
            await held.opened;
          }),
        );
        // Every key's first task has started while all of them are still held open.
        expect(started).toEqual(keys);
        expect(queue.size).toBe(keys.length);
        keys.forEach((key) => expect(queue.busy(key)).toBe(true));
        held.open();
        await Promise.all(all);
        await queue.idle();
        expect(queue.size).toBe(0);
      }),
      { numRuns: 100 },
    );
  });

  it('holds an entry only for busy keys: the map does not grow with the keys ever seen (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 1_000_000 }), fails: fc.boolean() }), { minLength: 1, maxLength: 200 }),
        async (jobs) => {
          const queue = new KeyedQueue<number>();
          let peak = 0;
          for (const job of jobs) {
            // One at a time: at most one key is ever busy, however many distinct keys pass.
            await queue
              .run(job.key, async () => {
                peak = Math.max(peak, queue.size);
                if (job.fails) throw new Error('failed');
              })
              .catch(() => undefined);
            await queue.idle();
            expect(queue.busy(job.key)).toBe(false);
          }
          expect(peak).toBe(1);
          expect(queue.size).toBe(0);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a synchronous throw rejects only its own call; the key stays usable', async () => {
    const queue = new KeyedQueue();
    const thrown = queue.run('k', () => {
      throw new Error('boom');
    });
    await expect(thrown).rejects.toThrow('boom');
    await expect(queue.run('k', async () => 7)).resolves.toBe(7);
    await queue.idle();
    expect(queue.size).toBe(0);
  });

  it('a rejected task queued behind another does not stop the ones after it', async () => {
    const queue = new KeyedQueue();
    const first = gate();
    const seen: string[] = [];
    const a = queue.run('k', async () => {
      await first.opened;
      seen.push('a');
    });
    const b = queue.run('k', async () => {
      seen.push('b');
      throw new Error('b failed');
    });
    const c = queue.run('k', async () => {
      seen.push('c');
      return 'c';
    });
    expect(seen).toEqual([]);
    first.open();
    await a;
    await expect(b).rejects.toThrow('b failed');
    await expect(c).resolves.toBe('c');
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('starts a task of an idle key at once, in the calling turn', () => {
    const queue = new KeyedQueue();
    let started = false;
    void queue.run('k', async () => {
      started = true;
    });
    expect(started).toBe(true);
  });

  it('a task its key submits from inside its own synchronous part waits for it', async () => {
    const queue = new KeyedQueue();
    const first = gate();
    const seen: string[] = [];
    let inner: Promise<void> | undefined;
    const outer = queue.run('k', () => {
      expect(queue.busy('k')).toBe(true);
      inner = queue.run('k', async () => {
        seen.push('inner');
      });
      return (async () => {
        await first.opened;
        seen.push('outer');
      })();
    });
    await tick();
    expect(seen).toEqual([]);
    first.open();
    await Promise.all([outer, inner]);
    expect(seen).toEqual(['outer', 'inner']);
    expect(queue.size).toBe(0);
  });

  it('idle() waits for tasks submitted while it waits', async () => {
    const queue = new KeyedQueue();
    const first = gate();
    let secondDone = false;
    void queue.run('a', async () => {
      await first.opened;
      void queue.run('b', async () => {
        await tick();
        secondDone = true;
      });
    });
    const idle = queue.idle();
    first.open();
    await idle;
    expect(secondDone).toBe(true);
    expect(queue.size).toBe(0);
  });
});
