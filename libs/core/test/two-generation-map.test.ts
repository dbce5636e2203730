import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TwoGenerationMap } from '../src/index.ts';

type Op = { set: [number, number] } | { del: number };
const ops = fc.array(
  fc.oneof(fc.record({ set: fc.tuple(fc.integer({ min: 0, max: 40 }), fc.nat()) }), fc.record({ del: fc.integer({ min: 0, max: 40 }) })),
  { maxLength: 300 },
) as fc.Arbitrary<Op[]>;

describe('TwoGenerationMap', () => {
  it('holds the keys of the last maxKeys/2 sets with their latest value, never a stale one, never more than maxKeys (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), ops, (maxKeys, steps) => {
        const map = new TwoGenerationMap<number, number>(maxKeys);
        const latest = new Map<number, number>();
        const sets: number[] = []; // the key of every set, in order
        for (const step of steps) {
          if ('set' in step) {
            const [key, value] = step.set;
            map.set(key, value);
            latest.set(key, value);
            sets.push(key);
          } else {
            map.delete(step.del);
            latest.delete(step.del);
          }
          expect(map.size).toBeLessThanOrEqual(maxKeys);
          for (const [key, value] of latest) {
            const got = map.get(key);
            expect(got === undefined || got === value).toBe(true);
          }
          for (const key of sets.slice(-Math.floor(maxKeys / 2))) expect(map.get(key)).toBe(latest.get(key));
        }
        for (let key = 0; key <= 40; key++) if (!latest.has(key)) expect(map.get(key)).toBeUndefined();
      }),
    );
  });

  it('holds nothing with maxKeys 0 or 1, and refuses a bad bound', () => {
    for (const maxKeys of [0, 1]) {
      const map = new TwoGenerationMap<string, number>(maxKeys);
      map.set('a', 1);
      expect([map.get('a'), map.size]).toEqual([undefined, 0]);
    }
    expect(() => new TwoGenerationMap(-1)).toThrow(RangeError);
  });
});
