import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KeyedSerializer } from '../src/scylla/keyed-serializer.ts';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('KeyedSerializer', () => {
  it('runs the work of one key one at a time, in call order, whatever each outcome (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), fails: fc.boolean(), throws: fc.boolean(), waits: fc.nat(3) }), {
          maxLength: 40,
        }),
        async (jobs) => {
          const serial = new KeyedSerializer();
          const running = new Map<string, number>();
          const order = new Map<string, number[]>();
          let overlap = false;
          const results = jobs.map((job, i) =>
            serial
              .run(job.key, async () => {
                if (job.throws && job.fails) throw new Error(`sync ${i}`);
                running.set(job.key, (running.get(job.key) ?? 0) + 1);
                if ((running.get(job.key) ?? 0) > 1) overlap = true;
                order.set(job.key, [...(order.get(job.key) ?? []), i]);
                for (let w = 0; w < job.waits; w++) await tick();
                running.set(job.key, (running.get(job.key) ?? 0) - 1);
                if (job.fails) throw new Error(`failed ${i}`);
                return i;
              })
              .then(
                (v) => ({ ok: v }),
                (err: Error) => ({ err: err.message }),
              ),
          );
          const settled = await Promise.all(results);
          await tick();
          expect(overlap).toBe(false);
          for (const [key, seen] of order) {
            const expected = jobs.flatMap((job, i) => (job.key === key && !(job.throws && job.fails) ? [i] : []));
            expect(seen).toEqual(expected);
          }
          settled.forEach((r, i) => expect(r).toEqual(jobs[i]?.fails ? { err: expect.stringContaining(String(i)) } : { ok: i }));
          expect(serial.size).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a synchronous throw rejects only its own call; the key stays usable', async () => {
    const serial = new KeyedSerializer();
    const thrown = serial.run('k', () => {
      throw new Error('boom');
    });
    await expect(thrown).rejects.toThrow('boom');
    await expect(serial.run('k', async () => 7)).resolves.toBe(7);
    await tick();
    expect(serial.size).toBe(0);
  });
});
