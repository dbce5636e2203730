import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handoverWait } from '../src/index.ts';
import type { DrawnEpoch, EpochRecord } from '../src/index.ts';

const WAIT_OUT = 11_000;
const T0 = 1_763_700_000_000;

const released = (epoch: number, atMs = T0): EpochRecord => ({ epoch, released: { epoch, atMs } });

describe('handoverWait', () => {
  it('serves at once a scope that never had an epoch', () => {
    expect(handoverWait({ drawn: { epoch: 1, before: undefined }, waitOutMs: WAIT_OUT, wallNowMs: T0 })).toEqual({
      waitMs: 0,
      reason: 'never-owned',
    });
  });

  it('serves at once after a clean release of the epoch just before', () => {
    expect(handoverWait({ drawn: { epoch: 8, before: released(7) }, waitOutMs: WAIT_OUT, wallNowMs: T0 + 5 })).toEqual({
      waitMs: 0,
      reason: 'released',
    });
  });

  it('waits the full wait-out when the previous epoch was not released (a crash, a lost lease)', () => {
    expect(handoverWait({ drawn: { epoch: 8, before: { epoch: 7 } }, waitOutMs: WAIT_OUT, wallNowMs: T0 })).toEqual({
      waitMs: WAIT_OUT,
      reason: 'not-released',
    });
  });

  it('does not trust the release of an older epoch: a later holder existed and may be writing', () => {
    const before: EpochRecord = { epoch: 7, released: { epoch: 6, atMs: T0 } };
    expect(handoverWait({ drawn: { epoch: 8, before }, waitOutMs: WAIT_OUT, wallNowMs: T0 + 10 }).waitMs).toBe(WAIT_OUT);
  });

  it('does not trust a record that is not the one right before its own epoch, nor a missing record past epoch 1', () => {
    expect(handoverWait({ drawn: { epoch: 9, before: released(7) }, waitOutMs: WAIT_OUT, wallNowMs: T0 + 10 }).waitMs).toBe(WAIT_OUT);
    expect(handoverWait({ drawn: { epoch: 2, before: undefined }, waitOutMs: WAIT_OUT, wallNowMs: T0 }).waitMs).toBe(WAIT_OUT);
    const future: EpochRecord = { epoch: 7, released: { epoch: 8, atMs: T0 } };
    expect(handoverWait({ drawn: { epoch: 8, before: future }, waitOutMs: WAIT_OUT, wallNowMs: T0 + 10 }).waitMs).toBe(WAIT_OUT);
  });

  it('after a clean release, waits until its own clock has passed the release time, never past the wait-out', () => {
    const drawn: DrawnEpoch = { epoch: 3, before: released(2, T0) };
    expect(handoverWait({ drawn, waitOutMs: WAIT_OUT, wallNowMs: T0 - 250 })).toEqual({ waitMs: 251, reason: 'released' });
    expect(handoverWait({ drawn, waitOutMs: WAIT_OUT, wallNowMs: T0 }).waitMs).toBe(1);
    expect(handoverWait({ drawn, waitOutMs: WAIT_OUT, wallNowMs: T0 + 1 }).waitMs).toBe(0);
    expect(handoverWait({ drawn, waitOutMs: WAIT_OUT, wallNowMs: T0 - 60_000 }).waitMs).toBe(WAIT_OUT);
  });

  it('refuses a nonsensical wait-out', () => {
    expect(() => handoverWait({ drawn: { epoch: 1, before: undefined }, waitOutMs: -1, wallNowMs: T0 })).toThrow(RangeError);
    expect(() => handoverWait({ drawn: { epoch: 1, before: undefined }, waitOutMs: Number.NaN, wallNowMs: T0 })).toThrow(RangeError);
  });

  const epochs = fc.integer({ min: 1, max: 50 });
  const record = fc.option(
    fc.record({
      epoch: epochs,
      released: fc.option(fc.record({ epoch: epochs, atMs: fc.integer({ min: T0 - 100_000, max: T0 + 100_000 }) }), { nil: undefined }),
    }),
    { nil: undefined },
  );
  const input = fc.record({
    drawn: fc.record({ epoch: epochs, before: record }),
    waitOutMs: fc.integer({ min: 0, max: 60_000 }),
    wallNowMs: fc.integer({ min: T0 - 100_000, max: T0 + 100_000 }),
  });

  it('property: never waits less than zero nor more than the wait-out', () => {
    fc.assert(
      fc.property(input, (i) => {
        const { waitMs } = handoverWait(i);
        expect(waitMs).toBeGreaterThanOrEqual(0);
        expect(waitMs).toBeLessThanOrEqual(i.waitOutMs);
      }),
    );
  });

  it('property: waits less than the wait-out only for a first epoch or a clean release of the epoch right before', () => {
    fc.assert(
      fc.property(input, (i) => {
        const { waitMs, reason } = handoverWait(i);
        if (waitMs >= i.waitOutMs) return;
        const before = i.drawn.before;
        if (before === undefined) {
          expect(i.drawn.epoch).toBe(1);
          expect(reason).toBe('never-owned');
        } else {
          expect(before.released?.epoch).toBe(before.epoch);
          expect(before.epoch).toBe(i.drawn.epoch - 1);
          // Its first write comes after the release time on its own clock.
          expect(i.wallNowMs + waitMs).toBeGreaterThan(before.released!.atMs);
        }
      }),
    );
  });

  it('property: a later clock never waits longer', () => {
    fc.assert(
      fc.property(input, fc.integer({ min: 0, max: 10_000 }), (i, later) => {
        expect(handoverWait({ ...i, wallNowMs: i.wallNowMs + later }).waitMs).toBeLessThanOrEqual(handoverWait(i).waitMs);
      }),
    );
  });
});

/**
 * A model of a shard's successive holders over time, with the store's record semantics
 * (recordRelease applies only while its epoch is the last drawn) and the host's rule for
 * recording (only a holder whose own wait was over, that stopped cleanly). Whatever the mix of
 * clean releases, releases before the wait was over and crashes, and whatever the clocks' skews,
 * no two holders may write at the same time and a successor after a release writes with later
 * wall-clock times than its predecessor's last write (or waited the full wait-out).
 */
describe('handoverWait in a history of holders', () => {
  type End = 'release' | 'release-while-waiting' | 'crash';
  const step = fc.record({
    end: fc.constantFrom<End>('release', 'release-while-waiting', 'crash'),
    /** Monotonic ms the holder stays after becoming writable (or before giving up while waiting). */
    stay: fc.integer({ min: 0, max: 30_000 }),
    /** Monotonic ms between the end of this holder and its successor's draw. */
    gap: fc.integer({ min: 0, max: 20_000 }),
    /** This holder's wall clock minus true time. */
    skew: fc.integer({ min: -5_000, max: 5_000 }),
  });
  const TTL = 10_000;
  const MARGIN = 1_000;

  it('property: writing intervals never overlap; after a release the successor writes later on the wall clock', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (holders) => {
        let record: EpochRecord | undefined;
        let now = 0;
        /** The last moment (true time) any earlier holder may still write. */
        let lastPossibleWrite = Number.NEGATIVE_INFINITY;
        /** Wall-clock reading of the predecessor at its recorded release. */
        let releaseWall: number | undefined;
        for (const [i, h] of holders.entries()) {
          const epoch = i + 1;
          const drawn: DrawnEpoch = { epoch, before: record };
          record = { epoch, ...(record?.released ? { released: record.released } : {}) };
          const wall = (t: number) => T0 + t + h.skew;
          const { waitMs, reason } = handoverWait({ drawn, waitOutMs: TTL + MARGIN, wallNowMs: wall(now) });
          const writableAt = now + waitMs;
          // Whatever the decision, it never writes while an earlier holder may.
          expect(writableAt).toBeGreaterThan(lastPossibleWrite);
          // A shortened wait after a release starts above the releaser's clock.
          if (releaseWall !== undefined && waitMs < TTL + MARGIN) expect(wall(writableAt)).toBeGreaterThan(releaseWall);
          if (reason === 'not-released') expect(waitMs).toBe(TTL + MARGIN);
          releaseWall = undefined;
          if (h.end === 'release-while-waiting' && waitMs > 0) {
            // Gave up before its wait was over: never wrote, records nothing.
            now += Math.min(h.stay, Math.max(0, waitMs - 1));
          } else {
            now = writableAt + h.stay;
            if (h.end === 'crash') {
              // A paused or lost holder may write until ttl − margin after its last renewal,
              // which started before its successor's acquire (rule b): bounded by the next draw.
              lastPossibleWrite = now + h.gap + TTL - MARGIN;
            } else {
              lastPossibleWrite = Math.max(lastPossibleWrite, now - 1);
              // Stopped, everything settled, then recorded while its epoch is still the last one.
              if (record.epoch === epoch) record = { epoch, released: { epoch, atMs: wall(now) } };
              releaseWall = wall(now);
            }
          }
          now += h.gap;
        }
      }),
      { numRuns: 500 },
    );
  });
});
