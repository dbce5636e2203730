/** The seq-log contract at volume: long paging, a dedup property over random batches, many streams at once. */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import type { DedupKey, Entry, StoredOutcome } from '@seqline/core';
import { dup, msgEntry, msgKey, seqsOf, uniqueTenant } from './harness.ts';
import type { SeqLogPort, SeqLogSuite } from './seq-log-port.ts';

/** Registers the volume tests inside the caller's describe block (seqLogTests does). */
export function volumeTests<K extends string, S extends SeqLogPort<K>>(ctx: { readonly store: S }, suite: SeqLogSuite<K, S>): void {
  const { makeKey } = suite;
  const find = (key: K, keys: readonly DedupKey[]): Promise<Map<DedupKey, number>> => suite.find(ctx.store, key, keys);
  const keys = (...appinfos: string[]): DedupKey[] => appinfos.map((a) => msgKey(a));
  const freshKey = (id = 'stream'): K => makeKey(uniqueTenant(), id);

  it('pages through 1000 entries forwards and backwards without skip or repeat', async () => {
    const key = freshKey();
    const seqs: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const entries = Array.from({ length: 100 }, (_, i) => {
        const n = batch * 100 + i;
        const seq = n * 8 + (n % 7) + 1; // strictly increasing, uneven gaps
        seqs.push(seq);
        return msgEntry(seq, `big-${n}`);
      });
      await suite.append(ctx.store, key, entries);
    }
    const forward: number[] = [];
    for (
      let after = 0, page = await suite.readAfter(ctx.store, key, after, 37);
      page.length > 0;
      page = await suite.readAfter(ctx.store, key, after, 37)
    ) {
      forward.push(...seqsOf(page));
      after = page.at(-1)?.seq ?? after;
    }
    expect(forward).toEqual(seqs);
    const backward: number[] = [];
    for (
      let before = Number.MAX_SAFE_INTEGER, page = await suite.readBefore(ctx.store, key, before, 41);
      page.length > 0;
      page = await suite.readBefore(ctx.store, key, before, 41)
    ) {
      backward.push(...seqsOf(page));
      before = page.at(-1)?.seq ?? before;
    }
    expect(backward).toEqual([...seqs].reverse());
    expect(seqsOf(await suite.readAfter(ctx.store, key, 0, 1000))).toEqual(seqs);
  });

  it('property: any batches → readAfter(0) holds one entry per appinfo, in seq order', async () => {
    const appinfo = fc.constantFrom('p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9');
    const batches = fc.array(fc.array(fc.record({ appinfo, gap: fc.integer({ min: 1, max: 5 }) }), { maxLength: 6 }), { maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(batches, async (plan) => {
        const key = freshKey('prop');
        const stored = new Map<string, number>();
        const originals = new Map<string, Entry>();
        let next = 0;
        for (const batch of plan) {
          const entries = batch.map(({ appinfo: a, gap }) => msgEntry((next += gap), a));
          const expected = entries.map((entry): StoredOutcome => {
            const original = originals.get(entry.appinfo);
            if (original !== undefined) return dup(original);
            stored.set(entry.appinfo, entry.seq);
            originals.set(entry.appinfo, entry);
            return { seq: entry.seq, duplicate: false };
          });
          expect(await suite.append(ctx.store, key, entries)).toEqual(expected);
        }
        const all = await suite.readAfter(ctx.store, key, 0, 1000);
        const model = [...stored.entries()].sort((x, y) => x[1] - y[1]);
        expect(all.map((entry) => [entry.appinfo, entry.seq])).toEqual(model);
        expect(await ctx.store.headSeq(key)).toBe(model.at(-1)?.[1] ?? 0);
        const found = await find(key, keys(...stored.keys()));
        expect([...found.entries()].sort()).toEqual([...stored.entries()].map(([a, seq]) => [msgKey(a), seq]).sort());
      }),
      { numRuns: 40 },
    );
  });

  it('concurrent appends to many streams all land', async () => {
    const tenant = uniqueTenant();
    const keys = Array.from({ length: 40 }, (_, i) => makeKey(tenant, `c${i}`));
    // One sequential writer per stream (the single-writer rule), all streams in parallel.
    await Promise.all(
      keys.map(async (key) => {
        for (let seq = 1; seq <= 15; seq++) await suite.append(ctx.store, key, [msgEntry(seq, `${key}-${seq}`)]);
      }),
    );
    for (const key of keys) {
      expect(await ctx.store.headSeq(key)).toBe(15);
      expect(seqsOf(await suite.readAfter(ctx.store, key, 0, 100))).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    }
  });
}
