/**
 * One bound on the keys the allocators of a process remember. A worker runs an allocator per
 * leased section (inbox and group shards); a bound per section alone let it hold 128 × it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { groupKey } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import { GroupStreamWriter, SectionAllocator, KeyBudget } from '../src/index.ts';
import { FakeCeilingStore, MemoryLogger } from './fakes.ts';
import { inbox, msg, rig } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-budget-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sections(budget: KeyBudget, n: number, ceilings = new FakeCeilingStore(), step = 50): SectionAllocator[] {
  return Array.from(
    { length: n },
    (_, i) => new SectionAllocator({ section: `s${i}`, ceilings, epoch: 1, step, budget, logger: new MemoryLogger() }),
  );
}

const tracked = (allocs: SectionAllocator[]): number => allocs.reduce((sum, a) => sum + a.trackedKeys, 0);

describe('KeyBudget', () => {
  it('keeps the keys of all its sections within the bound, taking from the largest', async () => {
    const budget = new KeyBudget(40);
    const allocs = sections(budget, 4);
    await Promise.all(allocs.map((a) => a.start()));
    // Section 0 gets most of the keys: it is the one that forgets.
    for (let i = 0; i < 60; i++) await allocs[0]!.next(`big-${i}`);
    for (let s = 1; s < 4; s++) for (let i = 0; i < 5; i++) await allocs[s]!.next(`small-${s}-${i}`);
    expect(budget.size).toBe(tracked(allocs));
    expect(budget.size).toBeLessThanOrEqual(40);
    for (let s = 1; s < 4; s++) expect(allocs[s]!.trackedKeys).toBe(5);
    expect(allocs[0]!.trackedKeys).toBeLessThan(40);
  });

  it('never hands a key a seq at or below one it was given, whichever section forgets (property)', async () => {
    const op = fc.record({ section: fc.nat(3), key: fc.nat(30), count: fc.integer({ min: 1, max: 3 }) });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.array(op, { maxLength: 300 }), async (max, ops) => {
        const budget = new KeyBudget(max);
        const ceilings = new FakeCeilingStore();
        const allocs = sections(budget, 4, ceilings, 7);
        await Promise.all(allocs.map((a) => a.start()));
        const last = new Map<string, number>();
        for (const { section, key, count } of ops) {
          const id = `${section}/k${key}`;
          const seqs = await allocs[section]!.next(`k${key}`, count);
          expect(seqs[0]).toBeGreaterThan(last.get(id) ?? 0);
          expect(seqs.at(-1)).toBeLessThanOrEqual(ceilings.durableCeiling(`s${section}`));
          last.set(id, seqs.at(-1)!);
          expect(budget.size).toBe(tracked(allocs));
          expect(budget.size).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('stops counting a released section, which can no longer hand out seqs', async () => {
    const budget = new KeyBudget(100);
    const allocs = sections(budget, 2);
    await Promise.all(allocs.map((a) => a.start()));
    for (let i = 0; i < 10; i++) await allocs[0]!.next(`a${i}`);
    for (let i = 0; i < 7; i++) await allocs[1]!.next(`b${i}`);
    allocs[0]!.release();
    expect(budget.size).toBe(7);
    expect(budget.holderCount).toBe(1);
    expect(() => allocs[0]!.tryNextSync('a0')).toThrow(/released/);
    await expect(allocs[0]!.next('a0')).rejects.toThrow(/released/);
  });

  it('rejects a bound that is not a positive integer', () => {
    expect(() => new KeyBudget(0)).toThrow(RangeError);
    expect(() => new KeyBudget(1.5)).toThrow(RangeError);
  });
});

describe('InboxOwner and GroupStreamWriter on one KeyBudget', () => {
  it('the owner of every shard and the group writer share the bound, and give their keys back on close', async () => {
    const r = rig();
    const budget = new KeyBudget(12);
    const owner = r.owner(1, { shardCount: 4, seqKeyBudget: budget, maxKeysPerSection: 1000 });
    const engine = await openEmbeddedEngine({ dir: join(root, 'groups') });
    const groups = new GroupStreamWriter({
      streams: engine.groupStreams,
      ceilings: engine.ceilings,
      logger: new MemoryLogger(),
      epoch: await engine.ceilings.nextEpoch('g'),
      shardCount: 4,
      seqKeyBudget: budget,
    });
    const heads = new Map<string, number>();
    for (let round = 0; round < 3; round++) {
      for (let u = 0; u < 30; u++) {
        const [outcome] = await owner.append({ inbox: inbox(`u${u}`), entries: [msg(`u${u}`, `r${round}`)] });
        expect(outcome!.seq).toBeGreaterThan(heads.get(`u${u}`) ?? 0);
        heads.set(`u${u}`, outcome!.seq);
        expect(budget.size).toBeLessThanOrEqual(12);
      }
      for (let g = 0; g < 6; g++) await groups.append({ group: groupKey('t1', `g${g}`), entries: [msg('u0', `g${round}`)] });
      expect(budget.size).toBeLessThanOrEqual(12);
    }
    expect(budget.size).toBeGreaterThan(0);
    await owner.close();
    await groups.close();
    expect(budget.size).toBe(0);
    expect(budget.holderCount).toBe(0);
    await engine.close();
  });
});
