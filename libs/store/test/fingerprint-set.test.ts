import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FingerprintSet } from '../src/scylla/fingerprint-set.ts';

describe('FingerprintSet', () => {
  it('answers like a Set for any sequence of adds (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 30 - 1 }), { maxLength: 3000 }),
        fc.array(fc.integer({ min: 0, max: 2 ** 30 - 1 }), { maxLength: 200 }),
        (added, probes) => {
          const set = new FingerprintSet();
          const model = new Set<number>();
          for (const print of added) {
            set.add(print);
            model.add(print);
          }
          return set.size === model.size && [...added, ...probes].every((print) => set.has(print) === model.has(print));
        },
      ),
    );
  });

  it('holds the edge values, 0 included, and counts a repeated add once', () => {
    const set = new FingerprintSet();
    for (const print of [0, 1, 2 ** 30 - 1, 0, 2 ** 30 - 1]) set.add(print);
    expect(set.size).toBe(3);
    expect([0, 1, 2, 2 ** 30 - 1].map((print) => set.has(print))).toEqual([true, true, false, true]);
  });

  it('refuses what is not a 30-bit fingerprint', () => {
    const set = new FingerprintSet();
    for (const bad of [-1, 2 ** 30, 1.5, Number.NaN]) expect(() => set.add(bad)).toThrow(RangeError);
  });

  it('takes 4–11 bytes per fingerprint in a full bucket (a Set of numbers takes about 33)', () => {
    const set = new FingerprintSet();
    for (let i = 0; i < 65_536; i++) set.add(Math.imul(i, 2_654_435_761) >>> 2);
    expect(set.size).toBe(65_536);
    const bytesEach = (set.capacity * 4) / set.size;
    expect(bytesEach).toBeGreaterThanOrEqual(4);
    expect(bytesEach).toBeLessThanOrEqual(11);
  });
});
