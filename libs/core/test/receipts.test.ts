import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  SYSTEM_SENDER,
  buildReadEntry,
  buildReceiptEntry,
  mergeReaders,
  readTargets,
  receiptAppinfo,
  targetsBySender,
} from '../src/index.ts';
import type { Entry } from '../src/index.ts';

const readersArb = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'zed', 'Bob', 'ü'), { maxLength: 8 });
const asSet = (xs: readonly string[]) => [...new Set(xs)].sort();

describe('mergeReaders', () => {
  it('returns the sorted unique union and whether it grew', () => {
    expect(mergeReaders(['c', 'a'], ['b', 'a'])).toEqual({ readers: ['a', 'b', 'c'], grew: true });
    expect(mergeReaders(['a', 'b'], ['b'])).toEqual({ readers: ['a', 'b'], grew: false });
    expect(mergeReaders([], [])).toEqual({ readers: [], grew: false });
    expect(mergeReaders([], ['x', 'x'])).toEqual({ readers: ['x'], grew: true });
  });

  it('does not count duplicates already in current as growth', () => {
    expect(mergeReaders(['a', 'a'], ['a'])).toEqual({ readers: ['a'], grew: false });
  });

  it('does not mutate its inputs', () => {
    const cur = Object.freeze(['b', 'a']);
    const add = Object.freeze(['c']);
    mergeReaders(cur, add);
    expect(cur).toEqual(['b', 'a']);
  });

  it('is commutative, idempotent and associative as a set', () => {
    fc.assert(
      fc.property(readersArb, readersArb, readersArb, (x, y, z) => {
        expect(mergeReaders(x, y).readers).toEqual(mergeReaders(y, x).readers);
        const xy = mergeReaders(x, y).readers;
        expect(mergeReaders(xy, y).readers).toEqual(xy);
        expect(mergeReaders(xy, y).grew).toBe(false);
        expect(mergeReaders(xy, z).readers).toEqual(mergeReaders(x, mergeReaders(y, z).readers).readers);
        expect(xy).toEqual(asSet([...x, ...y]));
      }),
    );
  });

  it('grew is exactly "added holds someone new"', () => {
    fc.assert(
      fc.property(readersArb, readersArb, (x, y) => {
        const fresh = y.some((r) => !x.includes(r));
        expect(mergeReaders(x, y).grew).toBe(fresh);
      }),
    );
  });

  it('concurrent readers merged in any order converge (no lost update)', () => {
    fc.assert(
      fc.property(fc.array(readersArb, { maxLength: 6 }), (batches) => {
        const forward = batches.reduce<string[]>((acc, b) => mergeReaders(acc, b).readers, []);
        const backward = [...batches].reverse().reduce<string[]>((acc, b) => mergeReaders(acc, b).readers, []);
        expect(forward).toEqual(backward);
        expect(forward).toEqual(asSet(batches.flat()));
      }),
    );
  });
});

describe('receiptAppinfo', () => {
  it('is deterministic in referSeq and reader count', () => {
    expect(receiptAppinfo(17, 2)).toBe('receipt:17:2');
    expect(receiptAppinfo(17, 2)).toBe(receiptAppinfo(17, 2));
    expect(receiptAppinfo(17, 3)).not.toBe(receiptAppinfo(17, 2));
    expect(receiptAppinfo(1, 72)).not.toBe(receiptAppinfo(17, 2));
  });
});

function msg(seq: number, from: string, conv: Entry['conv'], kind: Entry['kind'] = 'msg'): Entry {
  return { seq, kind, appinfo: `app-${seq}`, conv, from, sendTime: 1000 + seq };
}

describe('readTargets', () => {
  const bob = 'bob';
  const entries: Entry[] = [
    msg(1, 'alice', { type: 'user', id: 'alice' }),
    msg(2, bob, { type: 'user', id: 'alice' }), // bob's own message
    msg(3, 'carol', { type: 'group', id: 'g1' }),
    msg(4, 'alice', { type: 'user', id: 'alice' }, 'recall'),
    msg(5, 'alice', { type: 'user', id: 'alice' }, 'receipt'),
    msg(6, 'system', { type: 'group', id: 'g1' }, 'group'),
  ];

  it("keeps other senders' msg entries; 1:1 conv is seen from the sender (the reader)", () => {
    expect(readTargets(entries, bob)).toEqual([
      { senderUser: 'alice', appinfo: 'app-1', conv: { type: 'user', id: bob } },
      { senderUser: 'carol', appinfo: 'app-3', conv: { type: 'group', id: 'g1' } },
    ]);
  });

  it('skips everything when the reader sent it all or nothing is a msg', () => {
    expect(
      readTargets(
        entries.filter((e) => e.from === 'alice'),
        'alice',
      ),
    ).toEqual([]);
    expect(readTargets([], bob)).toEqual([]);
  });

  it('yields each appinfo once even if the same entry is given twice', () => {
    const e = msg(1, 'alice', { type: 'user', id: 'alice' });
    expect(readTargets([e, e], bob)).toHaveLength(1);
  });

  it("yields each sender's message once: two senders of one appinfo both get a receipt", () => {
    const alices = { ...msg(1, 'alice', { type: 'group', id: 'g1' }), appinfo: 'local-1' };
    const carols = { ...msg(2, 'carol', { type: 'group', id: 'g1' }), appinfo: 'local-1' };
    expect(readTargets([alices, carols, alices], bob).map((t) => [t.senderUser, t.appinfo])).toEqual([
      ['alice', 'local-1'],
      ['carol', 'local-1'],
    ]);
  });

  it('groups targets by sender', () => {
    const more = [...entries, msg(7, 'alice', { type: 'user', id: 'alice' })];
    const by = targetsBySender(readTargets(more, bob));
    expect([...by.keys()]).toEqual(['alice', 'carol']);
    expect(by.get('alice')?.map((t) => t.appinfo)).toEqual(['app-1', 'app-7']);
  });
});

describe('buildReadEntry', () => {
  it("sorts and dedups seqs, referSeq is the highest, lives in the reader's own conv", () => {
    expect(buildReadEntry('bob', [7, 3, 7, 5], 99, 'r-1')).toEqual({
      kind: 'read',
      appinfo: 'r-1',
      conv: { type: 'user', id: 'bob' },
      from: 'bob',
      sendTime: 99,
      referSeq: 7,
      seqs: [3, 5, 7],
    });
  });

  it('sorts numerically, not as strings', () => {
    expect(buildReadEntry('bob', [10, 9, 100], 1, 'r').seqs).toEqual([9, 10, 100]);
  });

  it('refuses an empty or invalid seq list', () => {
    expect(() => buildReadEntry('bob', [], 1, 'r')).toThrow(BadRequestError);
    expect(() => buildReadEntry('bob', [0], 1, 'r')).toThrow(BadRequestError);
    expect(() => buildReadEntry('bob', [1.5], 1, 'r')).toThrow(BadRequestError);
    expect(() => buildReadEntry('bob', [Number.NaN], 1, 'r')).toThrow(BadRequestError);
  });

  it("does not mutate the caller's array", () => {
    const seqs = [3, 1, 2];
    buildReadEntry('bob', seqs, 1, 'r');
    expect(seqs).toEqual([3, 1, 2]);
  });
});

describe('buildReceiptEntry', () => {
  it('carries all readers, a deterministic appinfo and the target conv', () => {
    const e = buildReceiptEntry(17, ['carol', 'bob'], { conv: { type: 'user', id: 'bob' } }, 500);
    expect(e).toEqual({
      kind: 'receipt',
      appinfo: 'receipt:17:2',
      conv: { type: 'user', id: 'bob' },
      from: SYSTEM_SENDER,
      sendTime: 500,
      referSeq: 17,
      readBy: ['bob', 'carol'],
    });
  });

  it('a retried receipt with the same readers has the same appinfo (dedups)', () => {
    const conv = { type: 'group' as const, id: 'g' };
    const a = buildReceiptEntry(3, ['b', 'c'], { conv }, 1);
    const b = buildReceiptEntry(3, ['c', 'b', 'b'], { conv }, 2);
    expect(a.appinfo).toBe(b.appinfo);
    expect(a.readBy).toEqual(b.readBy);
  });

  it('does not alias the target conv', () => {
    const target = { conv: { type: 'user' as const, id: 'bob' } };
    const e = buildReceiptEntry(1, ['bob'], target, 1);
    target.conv.id = 'mallory';
    expect(e.conv.id).toBe('bob');
  });

  it('refuses no readers or a bad referSeq', () => {
    const conv = { type: 'user' as const, id: 'x' };
    expect(() => buildReceiptEntry(1, [], { conv }, 1)).toThrow(BadRequestError);
    expect(() => buildReceiptEntry(0, ['a'], { conv }, 1)).toThrow(BadRequestError);
  });
});
