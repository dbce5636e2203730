/**
 * The give-up rule of both work queues (backoff.ts, `attemptsSpanning`): a job is dead-lettered
 * at the attempt by which its retries, counted from its first failure, spanned the window by
 * their schedule — the NATS queue with its fixed delays, the local one with the shortest of its
 * jittered delays (`failuresBeforeGivingUp`). No clock is read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  attemptsSpanning,
  backoffDelay,
  DEFAULT_BACKOFF,
  DEFAULT_MAX_CRASHED_DELIVERIES,
  DEFAULT_NATS_BACKOFF_MS,
  deliveryVerdict,
  failuresBeforeGivingUp,
  retryDelayFloors,
} from '../src/index.ts';

/** The delay after failure k (1-based): the last listed one repeats. */
const delayAfter = (delays: readonly number[], k: number): number => delays[Math.min(k, delays.length) - 1]!;
const scheduledBefore = (delays: readonly number[], attempt: number): number => {
  let sum = 0;
  for (let k = 1; k < attempt; k++) sum += delayAfter(delays, k);
  return sum;
};

const delaysArb = fc.array(fc.integer({ min: 1, max: 400_000 }), { minLength: 1, maxLength: 8 });
const windowArb = fc.integer({ min: 0, max: 4 * 3_600_000 });

describe('the give-up rule', () => {
  const policyArb = fc.record({
    initialMs: fc.integer({ min: 1, max: 120_000 }),
    maxMs: fc.integer({ min: 1, max: 600_000 }),
    giveUpAfterMs: windowArb,
  });

  it('the local queue retries for more than the window whatever its jitter, then gives up', () => {
    fc.assert(
      fc.property(policyArb, fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { minLength: 1 }), (policy, draws) => {
        const limit = failuresBeforeGivingUp(policy);
        expect(limit).toBeGreaterThanOrEqual(2); // a first failure never gives up
        let i = 0;
        const random = () => draws[i++ % draws.length]!;
        let spanned = 0;
        for (let failures = 1; failures < limit; failures++) spanned += backoffDelay(failures, policy, random);
        expect(spanned).toBeGreaterThan(policy.giveUpAfterMs);
        // …and not needlessly longer: one retry fewer at the shortest delays stays within it.
        expect(scheduledBefore(retryDelayFloors(policy), limit - 1)).toBeLessThanOrEqual(policy.giveUpAfterMs);
      }),
    );
  });

  it('attemptsSpanning is the fewest attempts whose retry delays since the first failure pass the window', () => {
    fc.assert(
      fc.property(windowArb, delaysArb, (giveUpAfterMs, delays) => {
        const n = attemptsSpanning(giveUpAfterMs, delays);
        expect(n).toBeGreaterThanOrEqual(2);
        expect(scheduledBefore(delays, n)).toBeGreaterThan(giveUpAfterMs);
        expect(scheduledBefore(delays, n - 1)).toBeLessThanOrEqual(giveUpAfterMs);
      }),
    );
  });

  it('with the defaults, the NATS queue gives up at its 12th attempt, at least 33¾ min after the first failure; the local one at its 69th', () => {
    expect(attemptsSpanning(DEFAULT_BACKOFF.giveUpAfterMs, DEFAULT_NATS_BACKOFF_MS)).toBe(12);
    expect(failuresBeforeGivingUp(DEFAULT_BACKOFF)).toBe(69);
    expect(scheduledBefore(DEFAULT_NATS_BACKOFF_MS, 12)).toBe(2_025_000);
  });

  it('refuses a schedule that is empty or has a delay that is not positive and finite', () => {
    for (const delays of [[], [0], [100, -1], [Number.NaN], [Number.POSITIVE_INFINITY]]) {
      expect(() => attemptsSpanning(1_000, delays)).toThrow(RangeError);
    }
  });
});

describe('the NATS queue counts crashed deliveries apart from failures (deliveryVerdict)', () => {
  it('runs a delivery while the deliveries that ended without a recorded failure stay within the bound, whatever the failures', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 60 }),
        (failures, crashed, maxCrashed) => {
          const verdict = deliveryVerdict({ deliveries: failures + crashed + 1, failures, maxCrashed });
          expect(verdict).toEqual(crashed > maxCrashed ? { run: false, crashed } : { run: true });
        },
      ),
    );
  });

  it('a failure count that cannot exceed the deliveries before this one (a stale record) never counts as a crash', () => {
    expect(deliveryVerdict({ deliveries: 3, failures: 5, maxCrashed: 0 })).toEqual({ run: true });
    expect(deliveryVerdict({ deliveries: 1, failures: 0, maxCrashed: 0 })).toEqual({ run: true });
    expect(deliveryVerdict({ deliveries: 2, failures: 0, maxCrashed: 0 })).toEqual({ run: false, crashed: 1 });
    expect(DEFAULT_MAX_CRASHED_DELIVERIES).toBeGreaterThan(attemptsSpanning(DEFAULT_BACKOFF.giveUpAfterMs, [...DEFAULT_NATS_BACKOFF_MS]));
  });
});
