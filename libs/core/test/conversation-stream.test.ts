/**
 * core's StreamTally (the stream side of a read-fanout group's conversation) against a plain
 * forward oracle: whatever the stream holds — messages with and without mentions, recalls,
 * edits by the sender and by others — the backward tally gives the oracle's counts and tail.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  dedupKeyOf,
  mergeConversationMessages,
  newerMessage,
  recalledKey,
  StreamTally,
  type Entry,
  type GroupMessage,
} from '../src/index.ts';

const SELF = 'me';
const USERS = [SELF, 'ann', 'ben'];

type Op =
  | { op: 'msg'; from: string; mentions: 'none' | 'self' | 'other' | 'all' }
  | { op: 'recall'; target: number }
  | { op: 'edit'; target: number; bySender: boolean; at: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('msg' as const),
    from: fc.constantFrom(...USERS),
    mentions: fc.constantFrom('none', 'self', 'other', 'all'),
  }),
  fc.record({ op: fc.constant('recall' as const), target: fc.nat(40) }),
  fc.record({ op: fc.constant('edit' as const), target: fc.nat(40), bySender: fc.boolean(), at: fc.nat(5) }),
);

const base = { conv: { type: 'group' as const, id: 'g' }, sendTime: 0 };

/** The stream the ops make: gseq = position + 1 (no gaps needed: the tally never looks at them). */
function streamOf(ops: Op[]): Entry[] {
  const rows: Entry[] = [];
  const msgs: Entry[] = [];
  ops.forEach((o, i) => {
    const seq = i + 1;
    if (o.op === 'msg') {
      const mentions = { none: undefined, self: [SELF], other: ['ann'], all: ['@all'] }[o.mentions];
      const m: Entry = {
        ...base,
        seq,
        kind: 'msg',
        // Each sender counts its own appinfos: two senders' local-1 share the stream.
        appinfo: `local-${msgs.filter((x) => x.from === o.from).length + 1}`,
        from: o.from,
        sendTime: seq,
        type: 't',
        body: seq,
        ...(mentions ? { mentions } : {}),
      };
      rows.push(m);
      msgs.push(m);
      return;
    }
    const target = msgs[o.target % Math.max(1, msgs.length)];
    if (target === undefined) return;
    if (o.op === 'recall') {
      rows.push({
        ...base,
        seq,
        kind: 'recall',
        appinfo: `recall:${target.from}:${target.appinfo}`,
        from: target.from,
        recall: { appinfo: target.appinfo, sendTime: target.sendTime, from: target.from },
      });
    } else {
      const from = o.bySender ? target.from : 'ben' === target.from ? 'ann' : 'ben';
      rows.push({
        ...base,
        seq,
        kind: 'edit',
        appinfo: `edit:${seq}`,
        from,
        edit: { appinfo: target.appinfo, sendTime: target.sendTime, type: 't', body: `e${seq}`, editedAt: o.at },
      });
    }
  });
  return rows.filter((r, i) => rows.findIndex((x) => dedupKeyOf(x) === dedupKeyOf(r)) === i);
}

/** The oracle: forward, as the rules read. */
function oracle(rows: Entry[], cursor: number, tailWanted: number) {
  const recalled = new Set(rows.filter((r) => r.kind === 'recall').map((r) => recalledKey(r.from, r.recall!)));
  const visible = rows.filter((r) => r.kind === 'msg' && !recalled.has(dedupKeyOf(r)));
  const counted = visible.filter((m) => m.seq > cursor && m.from !== SELF && !(m.mentions ?? []).includes(SELF));
  const shownEdit = (m: Entry) => {
    let shown: Entry['edit'] | undefined;
    for (const e of rows)
      // An edit by its sender of an earlier message (rules.ts, editHits): an appinfo is unique per sender only.
      if (
        e.kind === 'edit' &&
        e.edit!.appinfo === m.appinfo &&
        e.from === m.from &&
        e.seq > m.seq &&
        (!shown || e.edit!.editedAt >= shown.editedAt)
      )
        shown = e.edit;
    return shown;
  };
  // A message the member holds an inbox copy of is the inbox side's: only its gseq is kept.
  const holds = (m: Entry) => m.from === SELF || (m.mentions ?? []).includes(SELF);
  const held = new Map(rows.filter((r) => r.kind === 'msg' && holds(r)).map((m) => [dedupKeyOf(m), m.seq]));
  const tail = visible
    .filter((m) => !holds(m))
    .slice()
    .reverse()
    .slice(0, tailWanted)
    .map((m) => {
      const edit = shownEdit(m);
      return { appinfo: m.appinfo, gseq: m.seq, body: edit ? edit.body : m.body };
    });
  return { unread: counted.length, mentions: counted.filter((m) => (m.mentions ?? []).includes('@all')).length, tail, held };
}

describe('StreamTally', () => {
  it('counts and tails like the forward oracle, whatever the stream', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), fc.nat(60), fc.integer({ min: 1, max: 5 }), (ops, cursor, tailWanted) => {
        const rows = streamOf(ops);
        const tally = new StreamTally(SELF, cursor, tailWanted);
        for (const row of [...rows].reverse()) tally.add(row);
        const got = tally.result();
        const want = oracle(rows, cursor, tailWanted);
        expect({ unread: got.unread, mentions: got.mentions }).toEqual({ unread: want.unread, mentions: want.mentions });
        expect(got.tail.map((m) => ({ appinfo: m.appinfo, gseq: m.gseq, body: m.body }))).toEqual(want.tail);
        expect(got.held).toEqual(want.held);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses rows out of order (a walk that would count twice) and stops needing rows once done', () => {
    const t = new StreamTally(SELF, 5, 1);
    t.add({ ...base, seq: 7, kind: 'msg', appinfo: 'a', from: 'ann' });
    expect(() => t.add({ ...base, seq: 7, kind: 'msg', appinfo: 'b', from: 'ann' })).toThrow(RangeError);
    expect(t.needsRowsAtOrBelow(6)).toBe(true);
    expect(t.needsRowsAtOrBelow(5)).toBe(false);
  });

  it('shows one message once: a stream copy in the tail wins over an inbox copy; the newer by sendTime is last', () => {
    const inboxCopy: Entry = { ...base, seq: 40, kind: 'msg', appinfo: 'x', from: 'ann', sendTime: 10 };
    const streamCopy: GroupMessage = { ...inboxCopy, seq: 3, gseq: 3 };
    const notice: Entry = { ...base, seq: 41, kind: 'group', appinfo: 'group:g:add:1', from: 'ann', sendTime: 11, type: 'group.add' };
    expect(newerMessage(inboxCopy, streamCopy)).toBe(streamCopy);
    expect(newerMessage(notice, streamCopy)).toBe(notice);
    expect(newerMessage(null, undefined)).toBeNull();
    expect(mergeConversationMessages([notice, inboxCopy], [streamCopy], 5)).toEqual([streamCopy, notice]);
    expect(mergeConversationMessages([notice, inboxCopy], [streamCopy], 1)).toEqual([notice]);
  });

  it('a message the member holds a copy of comes from the inbox side (recalled or edited there), in stream form when passed', () => {
    const mine: Entry = { ...base, seq: 40, kind: 'msg', appinfo: 'mine', from: SELF, sendTime: 10, body: 'edited in the inbox' };
    const other: GroupMessage = { ...base, seq: 5, gseq: 5, kind: 'msg', appinfo: 'other', from: 'ann', sendTime: 9 };
    const held = new Map([[dedupKeyOf(mine), 6]]);
    expect(mergeConversationMessages([mine], [other], 5, held)).toEqual([other, { ...mine, seq: 6, gseq: 6 }]);
    // Recalled or deleted in the inbox: not in the inbox side, and the tally never tails it.
    expect(mergeConversationMessages([], [other], 5, held)).toEqual([other]);
    // Not passed by the tally (older than its walk): the inbox copy as it is.
    expect(mergeConversationMessages([mine], [], 5)).toEqual([mine]);
  });
});
