import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { msgEntry, msgKey } from '@seqline/testing';
import { FingerprintSet } from '../src/scylla/fingerprint-set.ts';
import {
  MAX_WINDOW_BUCKETS,
  WINDOW_ENTRIES,
  WriterStates,
  advance,
  fingerprint,
  mayHold,
  mayHoldKey,
  windowBuckets,
  windowLength,
  type StreamState,
} from '../src/scylla/writer-state.ts';

const state = (over: Partial<StreamState> = {}): StreamState => ({ term: undefined, head: 0, window: [], ...over });
const held = (s: StreamState, appinfos: string[]) => appinfos.filter((a) => mayHold(s, msgKey(a)));

describe('writer state', () => {
  it('moves the head and remembers the new dedup keys', () => {
    const prints = new FingerprintSet();
    prints.add(fingerprint(msgKey('a')));
    prints.add(fingerprint(msgKey('b')));
    const start = state({ head: 2, window: [{ bucket: 0, fingerprints: prints }] });
    const next = advance(start, [msgEntry(3, 'c')]);
    expect(next.head).toBe(3);
    expect(windowBuckets(next)).toEqual([0]);
    expect(held(next, ['a', 'b', 'c', 'd'])).toEqual(['a', 'b', 'c']);
  });

  it('keeps two dense buckets as the window and drops appinfos that leave it', () => {
    const dense = (bucket: number, n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => msgEntry(bucket * 65_536 + i + 1, `${tag}-${i}`));
    let s = advance(state(), dense(0, 40_000, 'b0'));
    s = advance(s, dense(1, 40_000, 'b1'));
    expect(windowBuckets(s)).toEqual([1, 0]);
    s = advance(s, [msgEntry(500_000, 'b7a'), msgEntry(500_001, 'b7b')]); // a jump: bucket 7 follows 1
    expect(windowBuckets(s)).toEqual([7, 1]); // bucket 1 alone holds WINDOW_ENTRIES
    expect(held(s, ['b0-0', 'b0-39999', 'b1-0', 'b1-39999', 'b7a', 'b7b'])).toEqual(['b1-0', 'b1-39999', 'b7a', 'b7b']);
  });

  it('keeps sparse buckets (one per takeover) until they hold WINDOW_ENTRIES, at most MAX_WINDOW_BUCKETS', () => {
    // Round fdd5f20f: a job replayed after 13 takeovers found its original three buckets back.
    let s = advance(state(), [msgEntry(1, 'first')]);
    for (let k = 1; k <= 13; k++) s = advance(s, [msgEntry(k * 100_000, `t${k}`)]);
    expect(held(s, ['first', 't1', 't13'])).toEqual(['first', 't1', 't13']);
    for (let k = 14; k <= 20; k++) s = advance(s, [msgEntry(k * 100_000, `t${k}`)]);
    expect(s.window).toHaveLength(MAX_WINDOW_BUCKETS);
    expect(held(s, ['first', 't4', 't5', 't20'])).toEqual(['t5', 't20']);
  });

  it('the window keeps just the buckets it needs (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 70_000 }), { minLength: 1, maxLength: 40 }), (sizes) => {
        const kept = windowLength(sizes);
        const olderThanNewest = (n: number) => sizes.slice(1, n).reduce((a, b) => a + b, 0);
        expect(kept).toBeGreaterThanOrEqual(Math.min(2, sizes.length)); // never fewer than before (two)
        expect(kept).toBeLessThanOrEqual(Math.min(sizes.length, MAX_WINDOW_BUCKETS));
        // Stopped early only at the bound or once the older buckets hold enough...
        if (kept < sizes.length) expect(kept === MAX_WINDOW_BUCKETS || olderThanNewest(kept) >= WINDOW_ENTRIES).toBe(true);
        // ...and the oldest bucket kept was still needed.
        if (kept > 2) expect(olderThanNewest(kept - 1)).toBeLessThan(WINDOW_ENTRIES);
      }),
    );
  });

  it('holds a whole bucket of appinfos: an inbox with a long history still appends without a read', () => {
    const full = Array.from({ length: 65_535 }, (_, i) => msgEntry(i + 1, `old-${i}`));
    const s = advance(state(), full);
    expect(s.head).toBe(65_535);
    // Every stored appinfo is a candidate (no false negative, whatever the window's size)...
    expect(full.every((e) => mayHold(s, msgKey(e.appinfo)))).toBe(true);
    // ...and a new one almost never is (30-bit fingerprints: ≈ 65 535 / 2^30 per lookup).
    const fresh = Array.from({ length: 20_000 }, (_, i) => `new-${i}`);
    expect(held(s, fresh).length).toBeLessThan(10);
  });

  it('never misses an appinfo written in the window (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 200 }), (appinfos) => {
        const s = advance(
          state(),
          appinfos.map((a, i) => msgEntry(i + 1, a)),
        );
        return appinfos.every((a) => mayHold(s, msgKey(a)));
      }),
    );
  });

  it("a message is a candidate by its dedup key, or by its appinfo where the previous layout's rows are loaded", () => {
    const prints = new FingerprintSet();
    prints.add(fingerprint('old-1')); // a previous-layout row: keyed by the plain appinfo
    const s = advance(state({ head: 1, window: [{ bucket: 0, fingerprints: prints }] }), [msgEntry(2, 'new-1')]);
    expect(mayHoldKey(s, msgKey('old-1'), 'old-1')).toBe(true);
    expect(mayHoldKey(s, msgKey('old-1', 'carol'), 'old-1')).toBe(true); // a candidate only: the store checks the sender
    expect(mayHoldKey(s, msgKey('new-1'), 'new-1')).toBe(true);
    expect(mayHoldKey(s, msgKey('new-1', 'carol'), 'new-1')).toBe(false);
  });

  it('fingerprints are small integers (kept unboxed by V8)', () => {
    for (const a of ['', 'a', 'x'.repeat(200), '消息-1', '\u{1F600}']) {
      const print = fingerprint(a);
      expect(Number.isInteger(print) && print >= 0 && print < 2 ** 30).toBe(true);
    }
  });

  it('gives a stream back only to the term that remembered it', () => {
    const states = new WriterStates();
    states.remember('s', state({ term: 'shard-1@4', head: 9 }));
    expect(states.get('s', 'shard-1@4')?.head).toBe(9);
    expect(states.get('s', 'shard-1@5')).toBeUndefined();
    expect(states.get('s', 'shard-1@4')).toBeUndefined(); // a newer term saw it: forgotten for good
  });
});
