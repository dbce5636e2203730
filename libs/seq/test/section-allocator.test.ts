import { describe, expect, it } from 'vitest';
import { FencedError } from '@seqline/core';
import { SectionAllocator } from '../src/index.ts';
import { FakeCeilingStore, MemoryLogger, deferred, tick } from './fakes.ts';

const S = 'sec-0';

function alloc(ceilings: FakeCeilingStore, epoch: number, step = 10_000, extra: { preRaiseAt?: number; maxKeys?: number } = {}) {
  return new SectionAllocator({ section: S, ceilings, epoch, step, ...extra, logger: new MemoryLogger() });
}

describe('SectionAllocator start', () => {
  it('claims, then makes C+step durable before the first seq; first seq is C+1', async () => {
    const ceilings = new FakeCeilingStore();
    ceilings.sections.set(S, { ceiling: 12_345, epoch: 3 });
    const a = alloc(ceilings, 4);
    expect(() => a.tryNextSync('u')).toThrow(/not started/);
    await a.start();
    expect(ceilings.events).toEqual([
      { op: 'claim', section: S, epoch: 4, ceiling: 12_345 },
      { op: 'raise', section: S, epoch: 4, ceiling: 22_345 },
    ]);
    expect(a.tryNextSync('u')).toBe(12_346);
    expect(a.tryNextSync('v')).toBe(12_346); // per-key sequences, same floor
    expect(await a.next('u', 3)).toEqual([12_347, 12_348, 12_349]);
  });

  it('next() starts lazily; start() is idempotent', async () => {
    const ceilings = new FakeCeilingStore();
    const a = alloc(ceilings, 1);
    const [x, y] = await Promise.all([a.next('k'), a.next('k'), a.start(), a.start()]);
    expect([x, y]).toEqual([[1], [2]]);
    expect(ceilings.events.filter((e) => e.op === 'claim')).toHaveLength(1);
  });

  it('a claim with a stale epoch fences at start', async () => {
    const ceilings = new FakeCeilingStore();
    ceilings.sections.set(S, { ceiling: 0, epoch: 9 });
    const a = alloc(ceilings, 8);
    await expect(a.start()).rejects.toBeInstanceOf(FencedError);
    expect(a.isDeposed).toBe(true);
    await expect(a.next('k')).rejects.toBeInstanceOf(FencedError);
  });
});

describe('SectionAllocator ceiling', () => {
  it('never returns a seq above the durable ceiling, with slow raises and many keys', async () => {
    const ceilings = new FakeCeilingStore();
    ceilings.beforeRaise = () => new Promise((r) => setTimeout(r, Math.random() * 3));
    const a = alloc(ceilings, 1, 7);
    await a.start();
    const seen = new Map<string, Set<number>>();
    const check = (key: string, seq: number): void => {
      // Checked at the moment the caller gets the seq.
      expect(seq).toBeLessThanOrEqual(ceilings.durableCeiling(S));
      const set = seen.get(key) ?? new Set();
      expect(set.has(seq)).toBe(false);
      seen.set(key, set.add(seq));
    };
    await Promise.all(
      Array.from({ length: 400 }, async (_, i) => {
        const key = `k${i % 5}`;
        const seqs = await a.next(key, 1 + (i % 3));
        for (const s of seqs) check(key, s);
        const sync = a.tryNextSync(key);
        if (sync !== undefined) check(key, sync);
      }),
    );
    for (const set of seen.values()) expect(set.size).toBeGreaterThan(0);
    // Raise events are durable in increasing order.
    const raises = ceilings.events.filter((e) => e.op === 'raise').map((e) => e.ceiling);
    expect(raises).toEqual([...raises].sort((x, y) => x - y));
  });

  it('concurrent callers that need a raise share one in-flight raise', async () => {
    const ceilings = new FakeCeilingStore();
    const a = alloc(ceilings, 1, 1000);
    await a.start();
    a.observe('hot', 1000); // at the ceiling: the next seq needs a raise
    const gate = deferred();
    ceilings.beforeRaise = () => gate.promise;
    const before = ceilings.raiseCalls;
    const calls = Array.from({ length: 200 }, () => a.next('hot'));
    expect(a.tryNextSync('hot')).toBeUndefined();
    await tick();
    expect(ceilings.raiseCalls - before).toBe(1);
    gate.resolve();
    const seqs = (await Promise.all(calls)).flat();
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => 1001 + i));
    expect(ceilings.raiseCalls - before).toBe(1);
  });

  it('pre-raises in the background so the hot path does not wait', async () => {
    const ceilings = new FakeCeilingStore();
    const a = alloc(ceilings, 1, 100);
    await a.start();
    let misses = 0;
    let last = 0;
    for (let i = 0; i < 5000; i++) {
      let s = a.tryNextSync('k');
      if (s === undefined) {
        misses++;
        s = (await a.next('k'))[0]!;
      }
      expect(s).toBe(last + 1);
      last = s;
      if (i % 10 === 9) await tick(); // the event loop turns now and then, as in a server
    }
    expect(misses).toBe(0);
    expect(ceilings.durableCeiling(S)).toBeGreaterThanOrEqual(5000);
  });

  it('a transient raise failure reaches the waiting caller; the next call retries', async () => {
    const ceilings = new FakeCeilingStore();
    const a = alloc(ceilings, 1, 10, { preRaiseAt: 1 });
    await a.start();
    await a.next('k', 10);
    ceilings.failNextRaise = new Error('timeout');
    await expect(a.next('k')).rejects.toThrow('timeout');
    expect(a.isDeposed).toBe(false);
    expect(await a.next('k')).toEqual([11]);
  });
});

describe('SectionAllocator fencing and restart', () => {
  it('a deposed allocator throws FencedError for every later call and never hands out', async () => {
    const ceilings = new FakeCeilingStore();
    const old = alloc(ceilings, 1, 10, { preRaiseAt: 1 });
    await old.start();
    const fresh = alloc(ceilings, 2, 10);
    await fresh.start();
    const handed: number[] = [];
    // Under its old ceiling the old owner may still hand out (those are below fresh's floor)…
    for (let i = 0; i < 10; i++) handed.push(...(await old.next('k')));
    // …but the raise past it is fenced, for every waiter.
    const waiters = Array.from({ length: 5 }, () => old.next('k'));
    for (const w of waiters) await expect(w).rejects.toBeInstanceOf(FencedError);
    expect(old.isDeposed).toBe(true);
    expect(() => old.tryNextSync('other')).toThrow(FencedError);
    expect(() => old.observe('k', 1)).toThrow(FencedError);
    await expect(old.next('other')).rejects.toBeInstanceOf(FencedError);
    const next = await fresh.next('k');
    expect(next[0]).toBeGreaterThan(Math.max(...handed));
  });

  it('restart mid-run: every seq of the new epoch is above every seq of the old one', async () => {
    const ceilings = new FakeCeilingStore();
    const first = alloc(ceilings, 1, 50);
    await first.start();
    const old = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const key = `k${i % 7}`;
        const [s] = await first.next(key);
        old.set(key, Math.max(old.get(key) ?? 0, s as number));
      }),
    );
    // Crash: `first` is abandoned with seqs handed out but maybe not stored anywhere.
    const second = alloc(ceilings, 2, 50);
    await second.start();
    const maxOld = Math.max(...old.values());
    for (const key of [...old.keys(), 'new-user']) {
      const [s] = await second.next(key);
      expect(s).toBeGreaterThan(maxOld);
    }
  });

  it('observe moves a key up (store head after takeover), never down', async () => {
    const ceilings = new FakeCeilingStore();
    const a = alloc(ceilings, 1, 100);
    await a.start();
    a.observe('k', 50);
    a.observe('k', 10);
    expect(await a.next('k')).toEqual([51]);
    a.observe('far', 5000); // above the ceiling: next waits for a raise past it
    expect(await a.next('far')).toEqual([5001]);
    expect(ceilings.durableCeiling(S)).toBeGreaterThanOrEqual(5001);
  });

  it('forgetting keys (maxKeys) raises the floor so a forgotten key never goes back', async () => {
    const ceilings = new FakeCeilingStore();
    const a = alloc(ceilings, 1, 1000, { maxKeys: 8 });
    await a.start();
    const last = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 20; i++) {
        const key = `k${i}`;
        const [s] = await a.next(key, 1 + (i % 4));
        expect(s).toBeGreaterThan(last.get(key) ?? 0);
        last.set(key, (s as number) + (i % 4));
      }
    }
    expect(a.trackedKeys).toBeLessThanOrEqual(8);
  });
});

describe('SectionAllocator forgetting', () => {
  it('forgets the least recently used keys first, not the first remembered', async () => {
    const a = alloc(new FakeCeilingStore(), 1, 1000, { maxKeys: 8 });
    await a.start();
    await a.next('k0', 6); // k0 is at 6, the others at 1
    for (let i = 1; i < 8; i++) await a.next(`k${i}`);
    await a.next('k0'); // k0 used again: now the most recent (at 7)
    await a.next('k8'); // one over the bound: an eighth (1 key) goes, k1
    // The floor is what the forgotten key had: 1 (k1), not 7 (k0, had it gone first).
    expect(a.currentOf('never-seen')).toBe(1);
    expect(a.currentOf('k0')).toBe(7);
    expect(a.trackedKeys).toBe(8);
  });
});

describe('SectionAllocator hot path', () => {
  // How fast it is, is the `seq` bench's to say (npm run bench -- seq); this says why it can be.
  it('hands out seqs from memory: 200 000 over 1 000 keys cost the ceiling store a claim and a few raises', async () => {
    const ceilings = new FakeCeilingStore();
    const a = alloc(ceilings, 1, 100);
    await a.start();
    const keys = Array.from({ length: 1000 }, (_, i) => `tenant:user-${i}`);
    let handedOut = 0;
    for (let i = 0; i < 200_000; i++) {
      const seq = a.tryNextSync(keys[i % 1000] as string);
      if (seq === undefined) await a.next(keys[i % 1000] as string); // a raise was needed: wait for it
      handedOut++;
    }
    expect(handedOut).toBe(200_000);
    // Each key reaches seq 200; with a step of 100 that takes a claim and at most 3 raises, not one per seq.
    expect(ceilings.events.filter((e) => e.op === 'claim')).toHaveLength(1);
    expect(ceilings.events.filter((e) => e.op === 'raise').length).toBeLessThanOrEqual(3);
    expect(a.currentOf('tenant:user-0')).toBe(200);
  });
});
