import { describe, expect, it } from 'vitest';
import { OwnerTallyBook } from '../src/owner-tallies.ts';
import type { OwnerCounts } from '../src/owner-tallies.ts';

const counts = (pending: number, caughtUp: number, held: number, landed: number): OwnerCounts => ({
  indexCatchUps: { pending, caughtUp, gaveUp: 1, dropped: 2 },
  unsettledAppends: { held, landed, dropped: 3 },
});

describe('OwnerTallyBook', () => {
  it('sums live owners, keeps the totals of dropped ones, and counts what a dropped owner still held apart', () => {
    const book = new OwnerTallyBook();
    expect(book.sum([counts(4, 10, 5, 6)])).toEqual({
      indexCatchUps: { pending: 4, caughtUp: 10, gaveUp: 1, dropped: 2 },
      unsettledAppends: { held: 5, landed: 6, dropped: 3 },
      unsettledAbandoned: 0,
      catchUpsHandedOn: 0,
    });
    // The owner goes with its lease: its totals stay, its levels become abandoned / handed on.
    book.retire(counts(4, 10, 5, 6));
    const after = book.sum([counts(1, 2, 0, 1)]);
    expect(after).toEqual({
      indexCatchUps: { pending: 1, caughtUp: 12, gaveUp: 2, dropped: 4 },
      unsettledAppends: { held: 0, landed: 7, dropped: 6 },
      unsettledAbandoned: 5,
      catchUpsHandedOn: 4,
    });
    // Totals never go down as owners come and go.
    book.retire(counts(1, 2, 0, 1));
    const later = book.sum([]);
    expect(later.indexCatchUps.caughtUp).toBe(12);
    expect(later.unsettledAppends.landed).toBe(7);
    expect(later.catchUpsHandedOn).toBe(5);
  });
});
