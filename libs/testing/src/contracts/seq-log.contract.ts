/**
 * The append/read contract shared by TimelineStore (inbox, seq) and GroupStreamStore
 * (group, gseq): seqs come from a single writer, gaps are fine, core's dedup key (sender and
 * appinfo for a message) deduplicates.
 */
import { expect, it } from 'vitest';
import { BadRequestError, InternalError, type DedupKey, type Entry } from '@seqline/core';
import { acrossReopen, dup, msgEntry, msgKey, seqsOf, uniqueTenant } from './harness.ts';
import { previousLayoutTests } from './seq-log-upgrade.contract.ts';
import type { SeqLogPort, SeqLogSuite } from './seq-log-port.ts';
import { sharedAppinfoTests } from './seq-log-senders.contract.ts';
import { volumeTests } from './seq-log-volume.contract.ts';

export type { FindSeqs, PreviousLayoutWriter, SeqLogPort, SeqLogSuite } from './seq-log-port.ts';

/** Registers the shared tests inside the caller's describe block. */
export function seqLogTests<K extends string, S extends SeqLogPort<K>>(ctx: { readonly store: S }, suite: SeqLogSuite<K, S>): void {
  const { open, makeKey } = suite;
  const find = (key: K, keys: readonly DedupKey[]): Promise<Map<DedupKey, number>> => suite.find(ctx.store, key, keys);
  const keys = (...appinfos: string[]): DedupKey[] => appinfos.map((a) => msgKey(a));
  const freshKey = (id = 'stream'): K => makeKey(uniqueTenant(), id);
  sharedAppinfoTests(ctx, suite);
  volumeTests(ctx, suite);
  if (suite.previousLayout !== undefined) previousLayoutTests(suite, suite.previousLayout);
  const fresh = (count: number, from = 1, prefix = 'm'): Entry[] =>
    Array.from({ length: count }, (_, i) => msgEntry(from + i, `${prefix}${from + i}`));

  it('is empty before the first append', async () => {
    const key = freshKey();
    expect(await ctx.store.headSeq(key)).toBe(0);
    expect(await suite.readAfter(ctx.store, key, 0, 10)).toEqual([]);
    expect(await suite.readBefore(ctx.store, key, 100, 10)).toEqual([]);
    expect((await find(key, keys('a', 'b'))).size).toBe(0);
  });

  it('append returns the seqs in order and moves the head', async () => {
    const key = freshKey();
    expect(await suite.append(ctx.store, key, fresh(3))).toEqual([
      { seq: 1, duplicate: false },
      { seq: 2, duplicate: false },
      { seq: 3, duplicate: false },
    ]);
    expect(await ctx.store.headSeq(key)).toBe(3);
    expect(await suite.append(ctx.store, key, [msgEntry(4, 'x4')])).toEqual([{ seq: 4, duplicate: false }]);
    expect(await ctx.store.headSeq(key)).toBe(4);
    expect(await suite.append(ctx.store, key, [])).toEqual([]);
  });

  it('readAfter is ascending, exclusive of afterSeq and bounded by limit', async () => {
    const key = freshKey();
    await suite.append(ctx.store, key, fresh(10));
    expect(seqsOf(await suite.readAfter(ctx.store, key, 0, 100))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 3, 4))).toEqual([4, 5, 6, 7]);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 9, 4))).toEqual([10]);
    expect(await suite.readAfter(ctx.store, key, 10, 4)).toEqual([]);
    expect(await suite.readAfter(ctx.store, key, 50, 4)).toEqual([]);
    expect(await suite.readAfter(ctx.store, key, 0, 0)).toEqual([]);
  });

  it('readBefore is descending, exclusive of beforeSeq and bounded by limit', async () => {
    const key = freshKey();
    await suite.append(ctx.store, key, fresh(10));
    expect(seqsOf(await suite.readBefore(ctx.store, key, 11, 3))).toEqual([10, 9, 8]);
    expect(seqsOf(await suite.readBefore(ctx.store, key, 5, 100))).toEqual([4, 3, 2, 1]);
    expect(seqsOf(await suite.readBefore(ctx.store, key, 1_000_000, 2))).toEqual([10, 9]);
    expect(await suite.readBefore(ctx.store, key, 1, 10)).toEqual([]);
    expect(await suite.readBefore(ctx.store, key, 5, 0)).toEqual([]);
  });

  it('accepts gaps in seqs', async () => {
    const key = freshKey();
    await suite.append(ctx.store, key, [msgEntry(1, 'g1'), msgEntry(2, 'g2')]);
    await suite.append(ctx.store, key, [msgEntry(10_005, 'g10005'), msgEntry(20_000_000, 'g20m')]);
    expect(await ctx.store.headSeq(key)).toBe(20_000_000);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 2, 10))).toEqual([10_005, 20_000_000]);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 3, 1))).toEqual([10_005]);
    expect(seqsOf(await suite.readBefore(ctx.store, key, 10_005, 10))).toEqual([2, 1]);
    expect(seqsOf(await suite.readBefore(ctx.store, key, 10_004, 10))).toEqual([2, 1]);
  });

  it('a resent appinfo returns the original seq and entry, and is not written again', async () => {
    const key = freshKey();
    const first = msgEntry(1, 'a', { body: { text: 'first' } });
    await suite.append(ctx.store, key, [first]);
    // The original as stored, not the resend: its caller needs no read to answer with it.
    expect(await suite.append(ctx.store, key, [msgEntry(2, 'a', { body: { text: 'resend' } })])).toEqual([dup(first)]);
    // A retry of the very same call (same seq) is a duplicate too, not a seq error.
    expect(await suite.append(ctx.store, key, [msgEntry(1, 'a')])).toEqual([dup(first)]);
    expect(await ctx.store.headSeq(key)).toBe(1);
    const all = await suite.readAfter(ctx.store, key, 0, 10);
    expect(all).toHaveLength(1);
    expect(all[0]?.body).toEqual({ text: 'first' });
  });

  it('deduplicates within one call and mixes duplicates with new entries', async () => {
    const key = freshKey();
    expect(await suite.append(ctx.store, key, [msgEntry(1, 'a'), msgEntry(2, 'b'), msgEntry(3, 'a')])).toEqual([
      { seq: 1, duplicate: false },
      { seq: 2, duplicate: false },
      dup(msgEntry(1, 'a')),
    ]);
    expect(await ctx.store.headSeq(key)).toBe(2);
    expect(await suite.append(ctx.store, key, [msgEntry(3, 'b'), msgEntry(4, 'c'), msgEntry(5, 'c')])).toEqual([
      dup(msgEntry(2, 'b')),
      { seq: 4, duplicate: false },
      dup(msgEntry(4, 'c')),
    ]);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 0, 10))).toEqual([1, 2, 4]);
    expect(await suite.append(ctx.store, key, [msgEntry(1, 'a'), msgEntry(2, 'b'), msgEntry(4, 'c')])).toEqual([
      dup(msgEntry(1, 'a')),
      dup(msgEntry(2, 'b')),
      dup(msgEntry(4, 'c')),
    ]);
  });

  it('a resend is deduped after its stream jumped ahead once per takeover, by the writer and after a reopen', async () => {
    // Every takeover moves a stream's seqs up to its section's ceiling: a job replayed minutes
    // later must still find its original (campaign round fdd5f20f: 13 jumps, stored twice).
    const key = freshKey();
    const first = msgEntry(1, 'first');
    const jumps = Array.from({ length: 13 }, (_, k) => msgEntry((k + 1) * 100_000, `t${k + 1}`));
    await acrossReopen(
      open,
      async (store) => {
        await suite.append(store, key, [first]);
        for (const entry of jumps) await suite.append(store, key, [entry]);
        expect(await suite.append(store, key, [msgEntry(1_400_000, 'first')])).toEqual([dup(first)]);
      },
      async (store) => {
        expect(await suite.append(store, key, [msgEntry(1_400_001, 'first'), msgEntry(1_400_002, 't1')])).toEqual([
          dup(first),
          dup(jumps[0] as Entry),
        ]);
        expect(seqsOf(await suite.readAfter(store, key, 0, 20))).toEqual([1, ...jumps.map((e) => e.seq)]);
      },
    );
  });

  it('rejects a seq not above the head and writes nothing of that call', async () => {
    const key = freshKey();
    await suite.append(ctx.store, key, fresh(10));
    await expect(suite.append(ctx.store, key, [msgEntry(10, 'late10')])).rejects.toThrow();
    await expect(suite.append(ctx.store, key, [msgEntry(4, 'late4')])).rejects.toThrow();
    await expect(suite.append(ctx.store, key, [msgEntry(11, 'ok11'), msgEntry(7, 'bad7')])).rejects.toThrow();
    await expect(suite.append(ctx.store, key, [msgEntry(12, 'ok12'), msgEntry(12, 'same12')])).rejects.toThrow();
    expect(await ctx.store.headSeq(key)).toBe(10);
    expect((await find(key, keys('late10', 'late4', 'ok11', 'bad7', 'ok12', 'same12'))).size).toBe(0);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 0, 100))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await suite.append(ctx.store, key, [msgEntry(11, 'ok11')])).toEqual([{ seq: 11, duplicate: false }]);
  });

  // One rule set (core's assertStorableEntry) for every adapter: before it, LMDB stored
  // fractional or NaN times (NaN read back as null) that CQL refused, CQL stored seq
  // MAX_SAFE_INTEGER that LMDB refused, and both stored an unknown kind that CQL then failed
  // to read back. Each is now refused everywhere, with a typed error and nothing of the call stored.
  it('refuses an entry it could not read back exactly, typed, and stores nothing of that call', async () => {
    const key = freshKey();
    await suite.append(ctx.store, key, [msgEntry(1, 'ok1')]);
    const bad = (over: Partial<Entry>, appinfo: string): Entry => ({ ...msgEntry(2, appinfo), ...over });
    const refusals: [Entry, typeof BadRequestError | typeof InternalError][] = [
      [bad({ sendTime: Number.NaN }, 'nan-time'), BadRequestError],
      [bad({ sendTime: 1.5 }, 'frac-time'), BadRequestError],
      [bad({ sendTime: Number.POSITIVE_INFINITY }, 'inf-time'), BadRequestError],
      [bad({ kind: 'read', referSeq: 0.5, seqs: [1] }, 'frac-refer'), BadRequestError],
      [bad({ kind: 'read', referSeq: 1, seqs: [1, Number.NaN] }, 'nan-seqs'), BadRequestError],
      [bad({ kind: 'recall', recall: { appinfo: 'ok1', sendTime: 2.5 } }, 'frac-recall'), BadRequestError],
      [bad({ kind: 'bogus' as Entry['kind'] }, 'bogus-kind'), BadRequestError],
      // A sender that would not split back out of its message's dedup key, or would take a server appinfo's ':'.
      [bad({ from: 'a/b' }, 'slash-from'), BadRequestError],
      [bad({ from: 'recall:x' }, 'colon-from'), BadRequestError],
      [bad({ appinfo: '€'.repeat(171) }, ''), BadRequestError], // 513 UTF-8 bytes in 171 code units
      [bad({ seq: Number.MAX_SAFE_INTEGER }, 'top-seq'), InternalError],
    ];
    for (const [entry, refusal] of refusals) {
      await expect(suite.append(ctx.store, key, [entry]), entry.appinfo).rejects.toBeInstanceOf(refusal);
      // A valid entry in the same call is not stored either.
      const behindValid = entry.seq === 2 ? { ...entry, seq: 3 } : entry;
      await expect(suite.append(ctx.store, key, [msgEntry(2, 'mate'), behindValid]), entry.appinfo).rejects.toBeInstanceOf(refusal);
    }
    expect(await ctx.store.headSeq(key)).toBe(1);
    expect((await find(key, keys('mate', ...refusals.map(([entry]) => entry.appinfo)))).size).toBe(0);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 0, 10))).toEqual([1]);
    // The limits are the same everywhere: 512 UTF-8 bytes is stored and found, by every adapter.
    const longest = msgEntry(2, `${'€'.repeat(170)}ab`);
    expect(await suite.append(ctx.store, key, [longest])).toEqual([{ seq: 2, duplicate: false }]);
    expect(await suite.readAfter(ctx.store, key, 1, 10)).toEqual([longest]);
    expect(await find(key, keys(longest.appinfo, '€'.repeat(171)))).toEqual(new Map([[msgKey(longest.appinfo), 2]]));
  });

  it('findSeqs maps the stored dedup keys of this stream only', async () => {
    const key = freshKey();
    const other = makeKey(uniqueTenant(), 'stream');
    await suite.append(ctx.store, key, [msgEntry(1, 'a'), msgEntry(7, 'b')]);
    await suite.append(ctx.store, other, [msgEntry(3, 'c')]);
    const found = await find(key, keys('a', 'b', 'c', 'nope'));
    expect([...found.entries()].sort()).toEqual([
      [msgKey('a'), 1],
      [msgKey('b'), 7],
    ]);
    expect((await find(key, [])).size).toBe(0);
  });

  it('keeps streams apart, including keys that prefix each other', async () => {
    const tenant = uniqueTenant();
    const a = makeKey(tenant, 'al');
    const b = makeKey(tenant, 'alice');
    await suite.append(ctx.store, a, [msgEntry(1, 'same'), msgEntry(2, 'only-a')]);
    expect(await suite.append(ctx.store, b, [msgEntry(1, 'same')])).toEqual([{ seq: 1, duplicate: false }]);
    expect(seqsOf(await suite.readAfter(ctx.store, a, 0, 10))).toEqual([1, 2]);
    expect(seqsOf(await suite.readAfter(ctx.store, b, 0, 10))).toEqual([1]);
    expect(seqsOf(await suite.readBefore(ctx.store, b, 100, 10))).toEqual([1]);
    expect(await ctx.store.headSeq(a)).toBe(2);
    expect(await ctx.store.headSeq(b)).toBe(1);
    expect((await find(b, keys('only-a'))).size).toBe(0);
  });

  it('entries, head and dedup survive a reopen', async () => {
    const key = freshKey();
    await acrossReopen(
      open,
      async (store) => {
        await suite.append(store, key, [msgEntry(1, 'r1'), msgEntry(5, 'r5')]);
        return suite.readAfter(store, key, 0, 10);
      },
      async (store, before) => {
        expect(await suite.readAfter(store, key, 0, 10)).toEqual(before);
        expect(await store.headSeq(key)).toBe(5);
        expect(await suite.append(store, key, [msgEntry(6, 'r1')])).toEqual([dup(msgEntry(1, 'r1'))]);
        await expect(suite.append(store, key, [msgEntry(5, 'r-new')])).rejects.toThrow();
      },
    );
  });
}
