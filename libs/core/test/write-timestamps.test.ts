import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InternalError,
  MAX_CQL_TIMESTAMP,
  SEQ_TIMESTAMP_BASE,
  SEQ_TIMESTAMP_STEPS,
  expiryWriteTimestamp,
  rebuildWriteTimestamps,
  seqOfWriteTimestamp,
  seqWriteTimestamp,
  type StoredWatermarkStamps,
} from '../src/index.ts';

const seqArb = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
/** Wall-clock µs of today give or take a century: what rows written before the layout carry. */
const wallClockArb = fc.bigInt({ min: 0n, max: 4_000_000_000_000_000n });

describe('seqWriteTimestamp', () => {
  it('a later seq gets a strictly higher timestamp, and every one fits a CQL bigint', () => {
    fc.assert(
      fc.property(seqArb, seqArb, (a, b) => {
        fc.pre(a !== b);
        const [lo, hi] = a < b ? [a, b] : [b, a];
        expect(seqWriteTimestamp(lo) < seqWriteTimestamp(hi)).toBe(true);
        // The rebuild steps of the largest seq too.
        expect(seqWriteTimestamp(hi) + SEQ_TIMESTAMP_STEPS - 1n <= MAX_CQL_TIMESTAMP).toBe(true);
        expect(seqOfWriteTimestamp(seqWriteTimestamp(hi))).toBe(BigInt(hi));
      }),
    );
    expect(seqWriteTimestamp(Number.MAX_SAFE_INTEGER) + SEQ_TIMESTAMP_STEPS - 1n).toBeLessThan(MAX_CQL_TIMESTAMP);
  });

  it('lies above every wall-clock timestamp, so rows written before the layout never win', () => {
    fc.assert(fc.property(seqArb, wallClockArb, (seq, wall) => seqWriteTimestamp(seq) > wall));
    expect(seqOfWriteTimestamp(BigInt(Date.now()) * 1000n)).toBeUndefined();
  });

  it('later writes of one inbox across owners (epoch by epoch, each above the ceiling it claimed) get higher timestamps', () => {
    // An owner's seqs start above the ceiling its predecessor reached (seqsvr): the seq carries the epoch.
    const ownerArb = fc.record({
      jump: fc.integer({ min: 1, max: 20_000 }),
      writes: fc.array(fc.integer({ min: 1, max: 600 }), { maxLength: 8 }),
    });
    fc.assert(
      fc.property(fc.array(ownerArb, { minLength: 1, maxLength: 12 }), (owners) => {
        let seq = 0;
        let last = -1n;
        for (const owner of owners) {
          seq += owner.jump;
          for (const gap of owner.writes) {
            seq += gap;
            const at = seqWriteTimestamp(seq);
            expect(at > last).toBe(true);
            last = at;
          }
        }
      }),
    );
  });

  it('refuses what is not a seq with an InternalError', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => seqWriteTimestamp(bad), String(bad)).toThrow(InternalError);
    }
  });
});

/** A stored watermark row as the layout leaves it: stamps of writes at or below `seq`'s steps. */
const storedArb: fc.Arbitrary<StoredWatermarkStamps> = fc
  .record({
    seq: fc.integer({ min: 0, max: 1_000_000 }),
    rebuilding: fc.boolean(),
    seqStep: fc.option(fc.bigInt({ min: 0n, max: 300n })),
    sentinelStep: fc.option(fc.bigInt({ min: 1n, max: 300n })),
    legacy: fc.option(wallClockArb),
  })
  .map(({ seq, rebuilding, seqStep, sentinelStep, legacy }) => ({
    seq,
    rebuilding,
    seqWrittenAt: legacy ?? (seqStep === null ? undefined : seqWriteTimestamp(seq) + seqStep),
    sentinelWrittenAt: sentinelStep === null ? undefined : seqWriteTimestamp(seq) + sentinelStep,
  }));

describe('rebuildWriteTimestamps', () => {
  it('clears above everything stored, writes rows after the clear, and stays below every later seq', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), storedArb, fc.nat({ max: 1000 }), (headSeq, stored, later) => {
        const { clear, rows, finish } = rebuildWriteTimestamps({ headSeq, stored });
        expect(clear < rows && rows < finish).toBe(true);
        const top = Math.max(headSeq, stored.seq);
        // Not overwritten by an older incremental write: any seq up to the head or the stored watermark.
        expect(clear > seqWriteTimestamp(top)).toBe(true);
        if (stored.seqWrittenAt !== undefined) expect(clear > stored.seqWrittenAt).toBe(true);
        // A cut-off rebuild wrote its rows one above its sentinel.
        if (stored.sentinelWrittenAt !== undefined) expect(clear > stored.sentinelWrittenAt + (stored.rebuilding ? 1n : 0n)).toBe(true);
        // Never hides a newer one: the next append is above every seq seen.
        expect(finish < seqWriteTimestamp(top + 1 + later)).toBe(true);
        expect(finish <= MAX_CQL_TIMESTAMP).toBe(true);
      }),
    );
  });

  it('repeated at one head, each rebuild clears above the last; the steps run out only after 150 of them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER - 1 }),
        fc.array(fc.constantFrom('done', 'cut-clear', 'cut-rows')),
        (head, kinds) => {
          let stored: StoredWatermarkStamps = { seq: head, rebuilding: false, seqWrittenAt: seqWriteTimestamp(head) };
          let previousTop = seqWriteTimestamp(head);
          for (const [n, kind] of [...kinds, ...Array<string>(200).fill('done')].entries()) {
            let stamps;
            try {
              stamps = rebuildWriteTimestamps({ headSeq: head, stored });
            } catch (err) {
              expect(err).toBeInstanceOf(InternalError);
              expect(n).toBeGreaterThanOrEqual(150);
              return;
            }
            expect(stamps.clear > previousTop).toBe(true);
            expect(stamps.finish < seqWriteTimestamp(head + 1)).toBe(true);
            if (kind === 'done') {
              stored = { seq: head, rebuilding: false, seqWrittenAt: stamps.finish, sentinelWrittenAt: stamps.finish };
              previousTop = stamps.finish;
            } else {
              stored = { ...stored, rebuilding: true, sentinelWrittenAt: stamps.clear };
              previousTop = kind === 'cut-rows' ? stamps.rows : stamps.clear;
            }
          }
          throw new Error('200 rebuilds at one head never ran out of steps');
        },
      ),
      { numRuns: 30 },
    );
  });

  it('a rebuild after every entry expired (head 0) still clears above the stored watermark', () => {
    const stored = { seq: 70_000, rebuilding: false, seqWrittenAt: seqWriteTimestamp(70_000) };
    const { clear, finish } = rebuildWriteTimestamps({ headSeq: 0, stored });
    expect(clear).toBeGreaterThan(seqWriteTimestamp(70_000));
    expect(finish).toBeLessThan(seqWriteTimestamp(70_001));
    // Its finish (watermark 0) is what the next rebuild reads: it still clears above.
    const again = rebuildWriteTimestamps({
      headSeq: 0,
      stored: { seq: 0, rebuilding: false, seqWrittenAt: finish, sentinelWrittenAt: finish },
    });
    expect(again.clear).toBeGreaterThan(finish);
    expect(again.finish).toBeLessThan(seqWriteTimestamp(70_001));
  });

  it('over rows written with wall-clock timestamps, starts at the head like any rebuild', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), wallClockArb, wallClockArb, (headSeq, a, b) => {
        const stamps = rebuildWriteTimestamps({
          headSeq,
          stored: { seq: headSeq, rebuilding: true, seqWrittenAt: a, sentinelWrittenAt: b },
        });
        expect(stamps.clear).toBe(seqWriteTimestamp(headSeq) + 1n);
      }),
    );
  });

  it('steps are per seq: SEQ_TIMESTAMP_BASE and SEQ_TIMESTAMP_STEPS as documented', () => {
    expect(seqWriteTimestamp(0)).toBe(SEQ_TIMESTAMP_BASE);
    expect(seqWriteTimestamp(3) - seqWriteTimestamp(2)).toBe(SEQ_TIMESTAMP_STEPS);
  });
});

describe('expiryWriteTimestamp', () => {
  it('lies above the watermark write and every rebuild at it, below the write of any later seq', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), storedArb, fc.nat({ max: 1000 }), (watermark, stored, later) => {
        const at = expiryWriteTimestamp(watermark);
        expect(at > seqWriteTimestamp(watermark)).toBe(true);
        expect(at < seqWriteTimestamp(watermark + 1 + later)).toBe(true);
        // A rebuild at the same head, whatever it finds stored at or below that head, stays below it.
        if (stored.seq <= watermark && (stored.seqWrittenAt ?? 0n) <= seqWriteTimestamp(watermark)) {
          let stamps;
          try {
            stamps = rebuildWriteTimestamps({ headSeq: watermark, stored });
          } catch (err) {
            expect(err).toBeInstanceOf(InternalError);
            return;
          }
          expect(stamps.finish < at).toBe(true);
        }
      }),
    );
  });

  it('after an expiry write, a rebuild at the same head refuses and one at a later head clears above it', () => {
    const watermark = 70_000;
    const stored = { seq: watermark, rebuilding: false, seqWrittenAt: expiryWriteTimestamp(watermark) };
    expect(() => rebuildWriteTimestamps({ headSeq: watermark, stored })).toThrow(InternalError);
    const { clear, finish } = rebuildWriteTimestamps({ headSeq: watermark + 1, stored });
    expect(clear).toBeGreaterThan(expiryWriteTimestamp(watermark));
    expect(finish).toBeLessThan(seqWriteTimestamp(watermark + 2));
  });
});
