/**
 * The refusal rule of a connection: one charge table, two limits (a streak of undecodable
 * frames, an allowance of refusals), one hold for both. Properties over random event streams
 * and clocks, plus the cases the gateway depends on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chargeFrame,
  FRAME_CHARGES,
  frameCost,
  initialRefusalState,
  LocalHoldStore,
  REFUSAL_CLOSE_REASONS,
  type FrameEvent,
  type RefusalLimits,
  type RefusalState,
  type RefusalVerdict,
} from '../src/index.ts';

const LIMITS: RefusalLimits = { maxConsecutiveBadFrames: 20, refusalAllowance: { burst: 64, perSecond: 8 }, holdMs: 5000 };
const bad = (bytes = 10): FrameEvent => ({ kind: 'undecodable', bytes });
const good: FrameEvent = { kind: 'decoded', bytes: 30 };
const refused: FrameEvent = { kind: 'refused', bytes: 30 };

/** Runs events (each `gap` ms after the previous) until the first close; the verdicts seen. */
function run(events: Array<{ event: FrameEvent; gap: number }>, limits = LIMITS): RefusalVerdict[] {
  let now = 1_000_000;
  let state: RefusalState = initialRefusalState(limits, now);
  const verdicts: RefusalVerdict[] = [];
  for (const { event, gap } of events) {
    now += gap;
    const charged = chargeFrame(state, event, limits, now);
    state = charged.state;
    verdicts.push(charged.verdict);
    if (charged.verdict.action !== 'continue') break;
  }
  return verdicts;
}

const limitsArb = fc.record({
  maxConsecutiveBadFrames: fc.nat({ max: 30 }),
  refusalAllowance: fc.record({ burst: fc.integer({ min: 1, max: 100 }), perSecond: fc.double({ min: 0.01, max: 50, noNaN: true }) }),
  holdMs: fc.nat({ max: 3_600_000 }),
});
const eventArb: fc.Arbitrary<FrameEvent> = fc.oneof(
  fc.constant(good),
  fc.constant(refused),
  fc.nat({ max: 256 * 1024 }).map((bytes) => bad(bytes)),
);
const streamArb = fc.array(fc.record({ event: eventArb, gap: fc.integer({ min: -1000, max: 2000 }) }), { maxLength: 300 });

describe('the charge table', () => {
  it('prices each event once: a decoded frame nothing, an undecodable one its frame cost, a refused one 1', () => {
    expect([
      FRAME_CHARGES.decoded.units(64 * 1024),
      FRAME_CHARGES.undecodable.units(64 * 1024),
      FRAME_CHARGES.refused.units(64 * 1024),
    ]).toEqual([0, 17, 1]);
    expect([frameCost(0), frameCost(4095), frameCost(4096), frameCost(66 * 1024), frameCost(-5), frameCost(Number.NaN)]).toEqual([
      1, 1, 2, 17, 1, 1,
    ]);
  });
});

describe('the refusal rule', () => {
  it('the streak closes with the same hold as the spent allowance', () => {
    const streak = run(Array.from({ length: 21 }, () => ({ event: bad(), gap: 0 })));
    expect(streak.at(-1)).toEqual({ action: 'close-and-hold', reason: REFUSAL_CLOSE_REASONS.streak, holdMs: 5000 });
    expect(streak).toHaveLength(21);
    const allowance = run(Array.from({ length: 65 }, () => ({ event: refused, gap: 0 })));
    expect(allowance.at(-1)).toEqual({ action: 'close-and-hold', reason: REFUSAL_CLOSE_REASONS.allowance, holdMs: 5000 });
    expect(allowance).toHaveLength(65);
  });

  it('19 bad frames and 1 valid, again and again: the streak never closes, the allowance does', () => {
    const round = [...Array.from({ length: 19 }, () => ({ event: bad(64 * 1024), gap: 0 })), { event: good, gap: 0 }];
    const verdicts = run(Array.from({ length: 5 }, () => round).flat());
    expect(verdicts.at(-1)).toMatchObject({ action: 'close-and-hold', reason: REFUSAL_CLOSE_REASONS.allowance });
    expect(verdicts.length).toBeLessThan(20); // 64 units: the fourth 64 KiB frame (17 each)
  });

  it('property: every close carries the configured hold, whichever limit closed', () => {
    fc.assert(
      fc.property(limitsArb, streamArb, (limits, stream) => {
        for (const verdict of run(stream, limits)) {
          if (verdict.action === 'close-and-hold') expect(verdict.holdMs).toBe(limits.holdMs);
        }
      }),
    );
  });

  it('property: a decoded frame never closes a socket', () => {
    fc.assert(
      fc.property(limitsArb, streamArb, (limits, stream) => {
        const verdicts = run(stream, limits);
        const last = verdicts.length - 1;
        if (verdicts[last]?.action === 'close-and-hold') expect(stream[last]?.event.kind).not.toBe('decoded');
      }),
    );
  });

  it('property: the streak closes exactly at max + 1 undecodable frames in a row', () => {
    fc.assert(
      fc.property(fc.nat({ max: 40 }), (max) => {
        const limits = { ...LIMITS, maxConsecutiveBadFrames: max, refusalAllowance: { burst: 10_000, perSecond: 1 } };
        const verdicts = run(
          Array.from({ length: max + 5 }, () => ({ event: bad(), gap: 0 })),
          limits,
        );
        expect(verdicts).toHaveLength(max + 1);
        expect(verdicts.at(-1)).toMatchObject({ reason: REFUSAL_CLOSE_REASONS.streak });
      }),
    );
  });

  it('property: the units let through never exceed burst + what the elapsed time refilled', () => {
    fc.assert(
      fc.property(limitsArb, streamArb, (limits, stream) => {
        let now = 0;
        let latest = 0;
        let state = initialRefusalState(limits, now);
        let spent = 0;
        for (const { event, gap } of stream) {
          now += gap;
          latest = Math.max(latest, now); // a clock stepping back refills nothing
          const charged = chargeFrame(state, event, limits, now);
          state = charged.state;
          if (charged.verdict.action !== 'continue') break;
          spent += FRAME_CHARGES[event.kind].units(event.bytes);
          expect(spent).toBeLessThanOrEqual(limits.refusalAllowance.burst + (latest * limits.refusalAllowance.perSecond) / 1000 + 1e-6);
        }
      }),
    );
  });

  it('property: refusals no faster than the refill never close a socket', () => {
    fc.assert(
      fc.property(limitsArb, fc.integer({ min: 1, max: 500 }), (limits, count) => {
        const gap = Math.ceil(1000 / limits.refusalAllowance.perSecond);
        expect(
          run(
            Array.from({ length: count }, () => ({ event: refused, gap })),
            limits,
          ).every((v) => v.action === 'continue'),
        ).toBe(true);
      }),
    );
  });

  it('property: pure — the state given is not changed, the same input gives the same answer', () => {
    fc.assert(
      fc.property(
        limitsArb,
        eventArb,
        fc.nat({ max: 100 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.integer(),
        (limits, event, streak, allowance, now) => {
          const state: RefusalState = Object.freeze({ badStreak: streak, allowance, updatedAt: 0 });
          expect(chargeFrame(state, event, limits, now)).toEqual(chargeFrame(state, event, limits, now));
          expect(state).toEqual({ badStreak: streak, allowance, updatedAt: 0 });
        },
      ),
    );
  });
});

describe('LocalHoldStore (the hold in one process; the contract suite runs in libs/cache)', () => {
  it('is bounded: when full, the holds set longest ago go first', () => {
    const holds = new LocalHoldStore({ now: () => 0 }, 2);
    holds.holdNow('a', 100);
    holds.holdNow('b', 100);
    holds.holdNow('c', 100);
    expect(['a', 'b', 'c'].map((k) => holds.remainingNow(k))).toEqual([0, 100, 100]);
    expect(holds.size).toBe(2);
  });

  it('ended holds are swept before any live one is dropped', () => {
    let now = 0;
    const holds = new LocalHoldStore({ now: () => now }, 2);
    holds.holdNow('short', 10);
    holds.holdNow('long', 1000);
    now = 20;
    holds.holdNow('new', 1000);
    expect(['short', 'long', 'new'].map((k) => holds.remainingNow(k))).toEqual([0, 980, 1000]);
  });
});
