import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  canReadGseq,
  closeWindow,
  isCurrentMember,
  isOpenWindow,
  openWindow,
  readsWholeGseqRange,
  visibleRange,
  wasMemberAt,
} from '../src/index.ts';
import type { Membership } from '../src/index.ts';

const at = (time: number, gseq: number) => ({ time, gseq });

describe('null membership', () => {
  it('is never a member and reads nothing', () => {
    expect(isCurrentMember(null)).toBe(false);
    expect(canReadGseq(null, 1)).toBe(false);
    expect(visibleRange(null)).toEqual([]);
    expect(wasMemberAt(null, 0)).toBe(false);
    expect(closeWindow(null, at(1, 1))).toBeNull();
  });
});

describe('a single window', () => {
  const joined = openWindow(null, 'bob', at(100, 10));

  it('joined after gseq 10 → sees 11 onwards, not 10', () => {
    expect(joined).toEqual({ user: 'bob', windows: [{ joinedAt: 100, fromGseq: 10 }] });
    expect(isCurrentMember(joined)).toBe(true);
    expect(canReadGseq(joined, 10)).toBe(false);
    expect(canReadGseq(joined, 11)).toBe(true);
    expect(canReadGseq(joined, 1e9)).toBe(true);
    expect(visibleRange(joined)).toEqual([{ after: 10, upTo: Infinity }]);
  });

  it('removed at gseq 20 → sees up to 20 inclusive', () => {
    const left = closeWindow(joined, at(200, 20));
    expect(isCurrentMember(left)).toBe(false);
    expect(canReadGseq(left, 20)).toBe(true);
    expect(canReadGseq(left, 21)).toBe(false);
    expect(visibleRange(left)).toEqual([{ after: 10, upTo: 20 }]);
  });

  it('wasMemberAt is joinedAt <= t < removedAt', () => {
    const left = closeWindow(joined, at(200, 20));
    expect(wasMemberAt(left, 99)).toBe(false);
    expect(wasMemberAt(left, 100)).toBe(true);
    expect(wasMemberAt(left, 199)).toBe(true);
    expect(wasMemberAt(left, 200)).toBe(false);
    expect(wasMemberAt(joined, 1e15)).toBe(true);
  });

  it('transitions are no-ops when already in the target state and never mutate', () => {
    const snapshot = structuredClone(joined);
    expect(openWindow(joined, 'bob', at(150, 15))).toBe(joined);
    const left = closeWindow(joined, at(200, 20));
    expect(joined).toEqual(snapshot);
    expect(closeWindow(left, at(300, 30))).toBe(left);
  });

  it("refuses another user's membership and bad change points", () => {
    expect(() => openWindow(joined, 'carol', at(1, 1))).toThrow(BadRequestError);
    expect(() => openWindow(null, 'bob', at(1, -1))).toThrow(BadRequestError);
    expect(() => openWindow(null, 'bob', at(Number.NaN, 1))).toThrow(BadRequestError);
    expect(() => closeWindow(joined, at(1, 1.5))).toThrow(BadRequestError);
  });
});

describe('re-join windows', () => {
  // joined at 10, removed at 20, re-joined at 30, removed at 40, re-joined at 50
  let m: Membership = openWindow(null, 'bob', at(100, 10));
  m = closeWindow(m, at(200, 20));
  m = openWindow(m, 'bob', at(300, 30));
  m = closeWindow(m, at(400, 40));
  m = openWindow(m, 'bob', at(500, 50));

  it('sees each stretch, not the gaps', () => {
    const readable = Array.from({ length: 60 }, (_, i) => i).filter((g) => canReadGseq(m, g));
    expect(readable).toEqual([...range(11, 20), ...range(31, 40), ...range(51, 59)]);
    expect(visibleRange(m)).toEqual([
      { after: 10, upTo: 20 },
      { after: 30, upTo: 40 },
      { after: 50, upTo: Infinity },
    ]);
    expect(m.windows.filter(isOpenWindow)).toHaveLength(1);
  });

  it('wasMemberAt follows the time windows', () => {
    expect([99, 100, 250, 300, 450, 500].map((t) => wasMemberAt(m, t))).toEqual([false, true, false, true, false, true]);
  });

  it('leave and re-join with no message in between merges into one range', () => {
    let n = openWindow(null, 'bob', at(1, 5));
    n = closeWindow(n, at(2, 9));
    n = openWindow(n, 'bob', at(3, 9));
    expect(visibleRange(n)).toEqual([{ after: 5, upTo: Infinity }]);
  });

  it('a window with no messages yields no range', () => {
    const n = closeWindow(openWindow(null, 'bob', at(1, 5)), at(2, 5));
    expect(visibleRange(n)).toEqual([]);
    expect(canReadGseq(n, 5)).toBe(false);
    expect(canReadGseq(n, 6)).toBe(false);
  });

  it('clamps stale heads and skewed clocks so windows never overlap or invert', () => {
    let n = openWindow(null, 'bob', at(100, 10));
    n = closeWindow(n, at(90, 8)); // removal read an older head / clock
    expect(n.windows[0]).toEqual({ joinedAt: 100, fromGseq: 10, removedAt: 100, toGseq: 10 });
    n = openWindow(n, 'bob', at(95, 7)); // re-join with an even older head
    expect(n.windows[1]).toEqual({ joinedAt: 100, fromGseq: 10 });
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

type Op = { join: boolean; time: number; gseq: number };
const opsArb = fc.array(
  fc.record({ join: fc.boolean(), time: fc.integer({ min: 0, max: 1000 }), gseq: fc.integer({ min: 0, max: 100 }) }),
  { maxLength: 30 },
);

function replay(ops: Op[], monotonic: boolean): Membership | null {
  let m: Membership | null = null;
  let time = 0;
  let gseq = 0;
  for (const op of ops) {
    // monotonic: the group head and the clock only move forward (the normal case)
    if (monotonic) {
      time += op.time;
      gseq += op.gseq;
    } else {
      time = op.time;
      gseq = op.gseq;
    }
    m = op.join ? openWindow(m, 'u', at(time, gseq)) : closeWindow(m, at(time, gseq));
  }
  return m;
}

describe('membership properties', () => {
  it('a random sequence of joins and leaves never leaves two open windows', () => {
    fc.assert(
      fc.property(opsArb, fc.boolean(), (ops, monotonic) => {
        const m = replay(ops, monotonic);
        const open = m?.windows.filter(isOpenWindow).length ?? 0;
        expect(open).toBeLessThanOrEqual(1);
        // windows are ordered, disjoint and never inverted
        const ws = m?.windows ?? [];
        ws.forEach((w, i) => {
          if (w.toGseq !== undefined) expect(w.toGseq).toBeGreaterThanOrEqual(w.fromGseq);
          if (w.removedAt !== undefined) expect(w.removedAt).toBeGreaterThanOrEqual(w.joinedAt);
          if (i < ws.length - 1) expect(isOpenWindow(w)).toBe(false);
          const next = ws[i + 1];
          if (next) expect(next.fromGseq).toBeGreaterThanOrEqual(w.toGseq as number);
        });
      }),
    );
  });

  it('membership state follows the last effective operation', () => {
    fc.assert(
      fc.property(opsArb, fc.boolean(), (ops, monotonic) => {
        const m = replay(ops, monotonic);
        const last = ops[ops.length - 1];
        expect(isCurrentMember(m)).toBe(last?.join ?? false);
      }),
    );
  });

  it('canReadGseq agrees with visibleRange, and ranges are sorted and disjoint', () => {
    fc.assert(
      fc.property(opsArb, fc.boolean(), (ops, monotonic) => {
        const m = replay(ops, monotonic);
        const ranges = visibleRange(m);
        for (let i = 1; i < ranges.length; i++) {
          expect(ranges[i]!.after).toBeGreaterThan(ranges[i - 1]!.upTo);
        }
        for (const r of ranges) expect(r.upTo).toBeGreaterThan(r.after);
        // the answer can only change at a window edge: probe every edge and its neighbours
        const probes = new Set<number>([0, 1e9]);
        for (const w of m?.windows ?? []) {
          for (const edge of [w.fromGseq, w.toGseq ?? w.fromGseq]) for (const d of [-1, 0, 1]) probes.add(edge + d);
        }
        for (const g of probes) {
          const inRange = ranges.some((r) => r.after < g && g <= r.upTo);
          expect(canReadGseq(m, g)).toBe(inRange);
        }
      }),
    );
  });

  it('readsWholeGseqRange says yes only when every gseq of the range is readable, and for one window always', () => {
    fc.assert(
      fc.property(opsArb, fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 0, max: 50 }), (ops, first, span) => {
        const m = replay(ops, true);
        const last = first + span;
        const all = range(first, last).every((g) => canReadGseq(m, g));
        if (readsWholeGseqRange(m, first, last)) expect(all).toBe(true);
        // With at most one window (no leave and re-join), the test is exact.
        if ((m?.windows.length ?? 0) <= 1) expect(readsWholeGseqRange(m, first, last)).toBe(all);
      }),
    );
  });
});
