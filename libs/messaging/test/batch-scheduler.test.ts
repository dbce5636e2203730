import { describe, expect, it } from 'vitest';
import { BatchScheduler } from '../src/batch-scheduler.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for a condition, a turn at a time, bounded so a broken scheduler fails rather than hangs. */
async function until(check: () => boolean, turns = 1_000): Promise<void> {
  for (let i = 0; i < turns && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

/** A scheduler whose batches take `ms` and record what ran concurrently. */
function rig(limits: { pool: number; perGroup: number; maxBatch: number }, ms = 5) {
  const live = { ...limits };
  const running = new Map<string, number>();
  const seen = { maxPerGroup: 0, maxPool: 0, pool: 0, batches: [] as Array<{ key: string | undefined; items: number[] }> };
  const s = new BatchScheduler<number>(
    { pool: () => live.pool, perGroup: () => live.perGroup, maxBatch: limits.maxBatch },
    async (key, items) => {
      const k = key ?? '-';
      running.set(k, (running.get(k) ?? 0) + 1);
      seen.pool++;
      if (key !== undefined) seen.maxPerGroup = Math.max(seen.maxPerGroup, running.get(k) ?? 0);
      seen.maxPool = Math.max(seen.maxPool, seen.pool);
      seen.batches.push({ key, items });
      await sleep(ms);
      running.set(k, (running.get(k) ?? 1) - 1);
      seen.pool--;
    },
  );
  return { s, live, seen };
}

describe('BatchScheduler (tier pool, per-group bound, merged batches)', () => {
  it('never runs more than perGroup batches of a group or pool batches overall, and merges what waits', async () => {
    const { s, seen } = rig({ pool: 3, perGroup: 2, maxBatch: 10 });
    const done = Promise.all(Array.from({ length: 60 }, (_, i) => s.submit(i % 2 ? 'g1' : 'g2', i)));
    await done;
    expect(seen.maxPerGroup).toBe(2);
    expect(seen.maxPool).toBe(3);
    const items = seen.batches.flatMap((b) => b.items).sort((a, b) => a - b);
    expect(items).toEqual(Array.from({ length: 60 }, (_, i) => i)); // each exactly once
    expect(seen.batches.length).toBeLessThan(60); // merged
    expect(Math.max(...seen.batches.map((b) => b.items.length))).toBeLessThanOrEqual(10);
    // Within a batch, items keep submission order.
    for (const b of seen.batches) expect(b.items).toEqual([...b.items].sort((x, y) => x - y));
    expect(s.stats()).toMatchObject({ running: 0, waiting: 0, maxRunningPerGroup: 2, items: 60 });
  });

  it('reads the limits live: a raised per-group bound applies without resubmitting', async () => {
    // Batches of 'g' hold until released, so what runs at once is counted, not timed.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const live = { pool: 10, perGroup: 1 };
    let running = 0;
    let maxRunning = 0;
    const s = new BatchScheduler<number>({ pool: () => live.pool, perGroup: () => live.perGroup, maxBatch: 1 }, async () => {
      maxRunning = Math.max(maxRunning, ++running);
      await gate;
      running--;
    });
    const all = Promise.all(Array.from({ length: 30 }, (_, i) => s.submit('g', i)));
    await until(() => running === 1);
    expect(s.stats().running).toBe(1);
    live.perGroup = 4;
    s.poke();
    await until(() => running === 4);
    expect(s.stats().running).toBe(4);
    release();
    await all;
    expect(maxRunning).toBe(4);
    expect(s.stats().perGroupLimit).toBe(4);
  });

  it('a hot group does not hold up another group or 1:1 work', async () => {
    // The hot group's batch never ends until the others are done: they cannot have waited on it.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const batches: Array<{ key: string | undefined; items: number[] }> = [];
    const s = new BatchScheduler<number>({ pool: () => 4, perGroup: () => 1, maxBatch: 1 }, async (key, items) => {
      batches.push({ key, items });
      if (key === 'hot') await gate;
    });
    const hot = Promise.all(Array.from({ length: 20 }, (_, i) => s.submit('hot', i)));
    await Promise.all([s.submit('cold', 100), s.submit(undefined, 200)]);
    expect(batches.filter((b) => b.key === 'hot')).toHaveLength(1); // still its first batch
    release();
    await hot;
    expect(batches.filter((b) => b.key === undefined).every((b) => b.items.length === 1)).toBe(true);
  });

  it('a failed batch fails each of its items (their jobs retry), and nothing else', async () => {
    let fail = true;
    const s = new BatchScheduler<number>({ pool: () => 1, perGroup: () => 1, maxBatch: 5 }, async (_k, items) => {
      await sleep(5);
      if (fail && items.includes(1)) throw new Error('store down');
    });
    const results = await Promise.allSettled([0, 1, 2, 3].map((i) => s.submit('g', i)));
    const rejected = results.map((r) => r.status === 'rejected');
    // Item 0 ran alone; 1, 2, 3 waited and were merged into one failing batch.
    expect(rejected).toEqual([false, true, true, true]);
    fail = false;
    await expect(s.submit('g', 1)).resolves.toBeUndefined();
  });

  it('a broken live limit falls back to 1 instead of stopping the pool', async () => {
    const s = new BatchScheduler<number>({ pool: () => Number.NaN, perGroup: () => 0, maxBatch: 5 }, async () => {
      await sleep(1);
    });
    await Promise.all([s.submit('g', 1), s.submit('g', 2)]);
    expect(s.stats().poolLimit).toBe(1);
  });
});
