import { describe, expect, it } from 'vitest';
import { BucketMarkerMemo } from '../src/scylla/bucket-marker-memo.ts';

describe('BucketMarkerMemo', () => {
  it("vouches for a stream's newest marked bucket written since the given time, and for nothing else", () => {
    const memo = new BucketMarkerMemo();
    expect(memo.fresh('s', 0, 0)).toBe(false);
    memo.wrote('s', 0, 100);
    expect([memo.fresh('s', 0, 100), memo.fresh('s', 0, 101), memo.fresh('s', 1, 0), memo.fresh('t', 0, 0)]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    memo.wrote('s', 2, 200); // a far bucket, then the one below it in the same append
    memo.wrote('s', 1, 200);
    expect([memo.fresh('s', 2, 200), memo.fresh('s', 1, 0), memo.fresh('s', 0, 0)]).toEqual([true, false, false]);
    memo.wrote('s', 2, 150); // an older write never moves the memo back
    expect(memo.fresh('s', 2, 200)).toBe(true);
  });

  it('forgets the oldest streams past its bound (a miss only re-writes a marker)', () => {
    const memo = new BucketMarkerMemo(4);
    for (let i = 0; i < 10; i++) memo.wrote(`s${i}`, 0, 1);
    expect(memo.fresh('s9', 0, 1)).toBe(true);
    expect(memo.fresh('s0', 0, 1)).toBe(false);
  });
});
