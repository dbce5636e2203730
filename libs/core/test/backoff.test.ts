/** The retry delay rule (backoff.ts): exponential from initialMs, capped at maxMs, equal jitter. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../src/index.ts';

describe('backoffDelay', () => {
  it('lies in [base/2, base], base = min(maxMs, initialMs · 2^(failures−1))', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (initialMs, maxMs, failures, r) => {
          const base = Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 52));
          const delay = backoffDelay(failures, { initialMs, maxMs }, () => r);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(base / 2));
          expect(delay).toBeLessThanOrEqual(Math.ceil(base));
        },
      ),
    );
  });

  it('never shrinks from one failure to the next (at the same jitter), and stops growing at the cap', () => {
    const schedule = { initialMs: 200, maxMs: 5_000 };
    const delays = Array.from({ length: 10 }, (_, i) => backoffDelay(i + 1, schedule, () => 1));
    expect(delays).toEqual([200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000, 5000]);
    expect(backoffDelay(1, schedule, () => 0)).toBe(100);
  });
});
