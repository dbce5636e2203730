import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clampLimit, closeWindow, filterVisibleGroupMessages, findSkips, isStrictlyIncreasing, openWindow, pageOf } from '../src/index.ts';
import type { Entry } from '../src/index.ts';

describe('clampLimit', () => {
  it('defaults to 200 and caps at 1000', () => {
    expect(clampLimit(undefined)).toBe(200);
    expect(clampLimit(Number.NaN)).toBe(200);
    expect(clampLimit(50)).toBe(50);
    expect(clampLimit(1000)).toBe(1000);
    expect(clampLimit(1001)).toBe(1000);
    expect(clampLimit(Infinity)).toBe(1000);
  });

  it('never returns less than 1 and floors fractions', () => {
    expect(clampLimit(0)).toBe(1);
    expect(clampLimit(-5)).toBe(1);
    expect(clampLimit(-Infinity)).toBe(1);
    expect(clampLimit(7.9)).toBe(7);
  });

  it('takes a custom default and max; a default above max is capped', () => {
    expect(clampLimit(undefined, 10, 50)).toBe(10);
    expect(clampLimit(60, 10, 50)).toBe(50);
    expect(clampLimit(undefined, 100, 50)).toBe(50);
  });

  it('property: always an integer in [1, max]', () => {
    fc.assert(
      fc.property(fc.option(fc.double(), { nil: undefined }), (limit) => {
        const l = clampLimit(limit);
        expect(Number.isInteger(l)).toBe(true);
        expect(l).toBeGreaterThanOrEqual(1);
        expect(l).toBeLessThanOrEqual(1000);
      }),
    );
  });
});

describe('pageOf', () => {
  it('uses the extra row only to say there is more', () => {
    expect(pageOf([1, 2, 3], 2)).toEqual({ items: [1, 2], hasMore: true });
    expect(pageOf([1, 2], 2)).toEqual({ items: [1, 2], hasMore: false });
    expect(pageOf([], 2)).toEqual({ items: [], hasMore: false });
  });

  it('property: paging limit+1 fetches walks every row exactly once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 20 }), (n, limit) => {
        const all = Array.from({ length: n }, (_, i) => i + 1);
        const seen: number[] = [];
        let after = 0;
        for (;;) {
          const rows = all.filter((s) => s > after).slice(0, limit + 1);
          const page = pageOf(rows, limit);
          seen.push(...page.items);
          if (!page.hasMore) break;
          after = page.items[page.items.length - 1]!;
        }
        expect(seen).toEqual(all);
      }),
    );
  });
});

describe('isStrictlyIncreasing', () => {
  it('rejects equal or decreasing neighbours', () => {
    expect(isStrictlyIncreasing([])).toBe(true);
    expect(isStrictlyIncreasing([5])).toBe(true);
    expect(isStrictlyIncreasing([1, 2, 10])).toBe(true);
    expect(isStrictlyIncreasing([1, 2, 2])).toBe(false);
    expect(isStrictlyIncreasing([3, 1])).toBe(false);
    expect(isStrictlyIncreasing([1, Number.NaN, 3])).toBe(false);
  });
});

describe('findSkips', () => {
  it('lists inbox seqs the client never received, ascending and unique', () => {
    expect(findSkips([1, 2, 4], [1, 2, 3, 4, 5])).toEqual([3, 5]);
    expect(findSkips([], [3, 1, 3])).toEqual([1, 3]);
    expect(findSkips([1, 2, 3], [1, 2, 3])).toEqual([]);
    expect(findSkips([9], [])).toEqual([]);
  });

  it('property: skips ∪ received ⊇ inbox and skips ∩ received = ∅', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(50)), fc.array(fc.nat(50)), (received, inbox) => {
        const skips = findSkips(received, inbox);
        for (const s of inbox) expect(skips.includes(s) || received.includes(s)).toBe(true);
        for (const s of skips) expect(received.includes(s)).toBe(false);
        expect(isStrictlyIncreasing(skips)).toBe(true);
      }),
    );
  });
});

describe('filterVisibleGroupMessages', () => {
  const entries: Entry[] = Array.from({ length: 30 }, (_, i) => ({
    seq: i + 1,
    kind: 'msg',
    appinfo: `m${i + 1}`,
    conv: { type: 'group', id: 'g' },
    from: 'a',
    sendTime: i,
  }));

  it('keeps only gseqs inside the membership windows', () => {
    let m = openWindow(null, 'bob', { time: 0, gseq: 5 });
    m = closeWindow(m, { time: 1, gseq: 10 });
    m = openWindow(m, 'bob', { time: 2, gseq: 20 });
    expect(filterVisibleGroupMessages(entries, m).map((e) => e.seq)).toEqual([6, 7, 8, 9, 10, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
  });

  it('a non-member sees nothing', () => {
    expect(filterVisibleGroupMessages(entries, null)).toEqual([]);
  });
});
