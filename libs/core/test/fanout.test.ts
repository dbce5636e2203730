import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  DEFAULT_TIER_THRESHOLDS as T,
  TIERS,
  assertGroupSize,
  chunk,
  fanoutModeFor,
  naturalTier,
  shrinkBelow,
  tierFor,
  tierRank,
  validateThresholds,
} from '../src/index.ts';
import type { Tier, TierThresholds } from '../src/index.ts';

const tierArb = fc.constantFrom<Tier>(...TIERS);

describe('tierFor: growing', () => {
  it.each([
    [0, 'small'],
    [1, 'small'],
    [99, 'small'],
    [100, 'large'],
    [101, 'large'],
    [1999, 'large'],
    [2000, 'huge'],
    [10_000, 'huge'],
  ] as const)('%i members from nothing → %s', (n, tier) => {
    expect(tierFor(n, undefined, T)).toBe(tier);
  });

  it('moves up immediately, even two tiers at once', () => {
    expect(tierFor(100, 'small', T)).toBe('large');
    expect(tierFor(2000, 'small', T)).toBe('huge');
    expect(tierFor(2000, 'large', T)).toBe('huge');
  });

  it('rejects counts that are not non-negative integers', () => {
    for (const n of [-1, 1.5, Number.NaN, Infinity]) {
      expect(() => tierFor(n, undefined, T)).toThrow(BadRequestError);
    }
  });
});

describe('tierFor: shrinking with hysteresis (10 %)', () => {
  it.each([
    [101, 'large'],
    [100, 'large'],
    [99, 'large'],
    [91, 'large'],
    [90, 'large'],
    [89, 'small'],
    [0, 'small'],
  ] as const)('large group shrinking to %i → %s', (n, tier) => {
    expect(tierFor(n, 'large', T)).toBe(tier);
  });

  it.each([
    [2001, 'huge'],
    [2000, 'huge'],
    [1999, 'huge'],
    [1800, 'huge'],
    [1799, 'large'],
    [100, 'large'],
    [90, 'large'],
    [89, 'small'],
  ] as const)('huge group shrinking to %i → %s', (n, tier) => {
    expect(tierFor(n, 'huge', T)).toBe(tier);
  });

  it('does not flap when a group oscillates around 100', () => {
    let tier: Tier = tierFor(99, undefined, T);
    const seen: Tier[] = [];
    for (const n of [101, 99, 101, 99, 100, 91, 90, 101]) {
      tier = tierFor(n, tier, T);
      seen.push(tier);
    }
    expect(seen.every((t) => t === 'large')).toBe(true);
  });

  it('with zero hysteresis behaves like the plain thresholds', () => {
    const t0 = { ...T, hysteresis: 0 };
    expect(tierFor(99, 'large', t0)).toBe('small');
    expect(tierFor(100, 'large', t0)).toBe('large');
    expect(tierFor(1999, 'huge', t0)).toBe('large');
  });

  it('is not fooled by float noise in threshold * (1 - h)', () => {
    // 100 * (1 - 0.07) = 93.00000000000001 in floating point
    const t = { ...T, hysteresis: 0.07 };
    expect(shrinkBelow(100, 0.07)).toBe(93);
    expect(tierFor(93, 'large', t)).toBe('large');
    expect(tierFor(92, 'large', t)).toBe('small');
  });
});

const thresholdsArb: fc.Arbitrary<TierThresholds> = fc
  .tuple(
    fc.integer({ min: 1, max: 5000 }),
    fc.integer({ min: 1, max: 5000 }),
    fc.integer({ min: 0, max: 90_000 }),
    fc.double({ min: 0, max: 0.99, noNaN: true }),
  )
  .map(([s, gap, extra, h]) => ({ smallBelow: s, largeBelow: s + gap, maxMembers: s + gap + extra, hysteresis: h }));

describe('tierFor: properties', () => {
  it('grows monotonically with member count from no history', () => {
    fc.assert(
      fc.property(thresholdsArb, fc.nat(100_000), fc.nat(100_000), (t, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(tierRank(tierFor(lo, undefined, t))).toBeLessThanOrEqual(tierRank(tierFor(hi, undefined, t)));
      }),
    );
  });

  it('lies between the natural tier and the current one, and is stable when re-applied', () => {
    fc.assert(
      fc.property(thresholdsArb, fc.nat(100_000), tierArb, (t, n, current) => {
        const next = tierFor(n, current, t);
        const natural = naturalTier(n, t);
        expect(tierRank(next)).toBeGreaterThanOrEqual(tierRank(natural));
        expect(tierRank(next)).toBeLessThanOrEqual(Math.max(tierRank(natural), tierRank(current)));
        expect(tierFor(n, next, t)).toBe(next);
      }),
    );
  });

  it('a shrinking group never moves down while at or above threshold * (1 - h)', () => {
    fc.assert(
      fc.property(thresholdsArb, fc.nat(100_000), (t, n) => {
        if (n >= t.smallBelow * (1 - t.hysteresis) + 1e-6) expect(tierFor(n, 'large', t)).not.toBe('small');
        if (n >= t.largeBelow * (1 - t.hysteresis) + 1e-6) expect(tierFor(n, 'huge', t)).toBe('huge');
      }),
    );
  });
});

describe('fanoutModeFor', () => {
  it('reads only for huge groups with read-fanout enabled', () => {
    expect(fanoutModeFor('huge', true)).toBe('read');
    expect(fanoutModeFor('huge', false)).toBe('write');
    expect(fanoutModeFor('large', true)).toBe('write');
    expect(fanoutModeFor('small', true)).toBe('write');
  });
});

describe('assertGroupSize', () => {
  it('accepts up to maxMembers and refuses one more', () => {
    expect(() => assertGroupSize(10_000, T)).not.toThrow();
    expect(() => assertGroupSize(0, T)).not.toThrow();
    expect(() => assertGroupSize(10_001, T)).toThrow(BadRequestError);
    expect(() => assertGroupSize(10_001, T)).toThrow(/10001 members; the maximum is 10000/);
  });
});

describe('validateThresholds', () => {
  it('accepts the defaults and returns a clean copy', () => {
    const extra = { ...T, junk: 1 } as TierThresholds;
    const v = validateThresholds(extra);
    expect(v).toEqual(T);
    expect(v).not.toBe(extra);
    expect('junk' in v).toBe(false);
  });

  it.each([
    ['smallBelow 0', { smallBelow: 0 }],
    ['negative smallBelow', { smallBelow: -5 }],
    ['fractional smallBelow', { smallBelow: 10.5 }],
    ['smallBelow == largeBelow', { smallBelow: 2000 }],
    ['smallBelow > largeBelow', { smallBelow: 3000 }],
    ['largeBelow > maxMembers', { largeBelow: 20_000 }],
    ['maxMembers > 100000', { maxMembers: 100_001 }],
    ['negative hysteresis', { hysteresis: -0.1 }],
    ['hysteresis 1', { hysteresis: 1 }],
    ['NaN hysteresis', { hysteresis: Number.NaN }],
    ['NaN maxMembers', { maxMembers: Number.NaN }],
  ])('rejects %s', (_name, patch) => {
    expect(() => validateThresholds({ ...T, ...patch })).toThrow(BadRequestError);
  });

  it('accepts the edges: largeBelow == maxMembers == 100000, hysteresis 0', () => {
    const t = { smallBelow: 1, largeBelow: 100_000, maxMembers: 100_000, hysteresis: 0 };
    expect(validateThresholds(t)).toEqual(t);
  });
});

describe('chunk', () => {
  it('splits into batches of at most size, last one shorter', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunk([], 3)).toEqual([]);
    expect(chunk([1, 2], 5)).toEqual([[1, 2]]);
  });

  it('rejects sizes that would loop forever or make no sense', () => {
    for (const s of [0, -1, 1.5, Number.NaN]) expect(() => chunk([1], s)).toThrow(BadRequestError);
  });

  it('concatenates back to the input, every batch non-empty and within size', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer({ min: 1, max: 50 }), (items, size) => {
        const batches = chunk(items, size);
        expect(batches.flat()).toEqual(items);
        for (const b of batches) {
          expect(b.length).toBeGreaterThan(0);
          expect(b.length).toBeLessThanOrEqual(size);
        }
        expect(batches.length).toBe(Math.ceil(items.length / size));
      }),
    );
  });
});
