/**
 * Random inbox histories for the conversation index, built for one owner's inbox: the no-drift
 * property test of core's rules (../test/conversation-drift.test.ts) applies them through an
 * in-memory adapter, and a store's contract suite appends them and compares its index with
 * core's recount. The one home of the test entry builders and the op interpreter.
 * An op picks its target when it runs (the entries it may name do not exist when generated).
 */
import fc from 'fast-check';
import {
  buildClearEntry,
  buildConversationReadEntry,
  buildDeleteEntry,
  buildEditEntry,
  buildGroupEventEntry,
  buildMessageCopy,
  buildReadEntry,
  buildRecallEntry,
  clearAppinfo,
  deleteAppinfo,
  editAppinfo,
  groupCreateAppinfo,
  groupEventAppinfo,
  groupRenameAppinfo,
  readAppinfo,
  receiptAppinfo,
  streamMarkerAppinfo,
} from '@seqline/core';
import type { Conv, Entry, Json, NewEntry } from '@seqline/core';

export const HISTORY_T0 = 1_763_700_000_000;

export type HistoryGroupEvent = 'create' | 'add' | 'remove' | 'rename' | 'tier';

export type HistoryOp =
  | { t: 'send'; conv: number; from: number; mentions: string[] | undefined }
  | { t: 'group'; conv: number; event: HistoryGroupEvent; name: string | undefined; rev: number | undefined }
  | { t: 'read'; conv: number; pick: number; raw: number; picked: boolean }
  | { t: 'readV1'; picks: number[]; missing: boolean }
  | { t: 'recall'; pick: number; bySender: boolean }
  | { t: 'edit'; pick: number; forged: boolean; editedAt: number }
  | { t: 'delete'; picks: number[]; missing: boolean }
  | { t: 'clear'; conv: number; pick: number | undefined; raw: number; picked: boolean }
  | { t: 'noise'; kind: 'receipt' | 'tick' }
  | { t: 'dup'; pick: number };

/** Who talks in the owner's inbox: 1:1 peers, a note to self and two groups. */
export interface HistoryCast {
  self: string;
  convs: Conv[];
  people: string[];
}

export function defaultCast(self: string): HistoryCast {
  return {
    self,
    convs: [
      { type: 'user', id: 'bob' },
      { type: 'user', id: 'carol' },
      { type: 'user', id: self },
      { type: 'group', id: 'g1' },
      { type: 'group', id: 'g2' },
    ],
    people: [self, 'bob', 'carol'],
  };
}

const idx = (n: number) => fc.nat({ max: n - 1 });
/** How far back from the newest entry a pick reaches: mostly the last few (the last message is where bugs hide). */
const back = fc.oneof({ weight: 3, arbitrary: fc.nat({ max: 3 }) }, { weight: 1, arbitrary: fc.nat() });

export function historyOpArb(cast: HistoryCast): fc.Arbitrary<HistoryOp> {
  const convs = cast.convs.length;
  const groups = cast.convs.flatMap((c, i) => (c.type === 'group' ? [i] : []));
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        t: fc.constant('send' as const),
        conv: idx(convs),
        from: idx(cast.people.length),
        mentions: fc.option(fc.subarray([cast.self, 'bob', '@all'], { minLength: 1 }), { nil: undefined }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant('group' as const),
        conv: fc.constantFrom(...groups),
        event: fc.constantFrom<HistoryGroupEvent>('create', 'add', 'remove', 'rename', 'tier'),
        // Names with revisions in any order (one group's notices race to an inbox), without a
        // revision (the creation name), and none (notices from before names were carried).
        name: fc.option(fc.constantFrom('alpha', 'beta', 'gamma'), { nil: undefined }),
        rev: fc.option(fc.nat({ max: 3 }), { nil: undefined }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant('read' as const),
        conv: idx(convs),
        pick: back,
        raw: fc.nat({ max: 80 }),
        picked: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant('readV1' as const),
        picks: fc.array(back, { minLength: 1, maxLength: 3 }),
        missing: fc.boolean(),
      }),
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('recall' as const), pick: back, bySender: fc.boolean() }) },
    {
      weight: 2,
      arbitrary: fc.record({ t: fc.constant('edit' as const), pick: back, forged: fc.boolean(), editedAt: fc.nat({ max: 4 }) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant('delete' as const),
        picks: fc.array(back, { minLength: 1, maxLength: 3 }),
        missing: fc.boolean(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant('clear' as const),
        conv: idx(convs),
        pick: fc.option(back, { nil: undefined }),
        raw: fc.nat({ max: 80 }),
        picked: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('noise' as const), kind: fc.constantFrom('receipt', 'tick') }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('dup' as const), pick: back }) },
  );
}

/**
 * The entry `op` writes into the owner's inbox, or null when it has nothing to act on yet.
 * `inbox` is the inbox so far (seq order, one entry per appinfo), `n` makes appinfos unique.
 */
export function historyEntryFor(op: HistoryOp, cast: HistoryCast, inbox: readonly Entry[], headSeq: number, n: number): NewEntry | null {
  const me = cast.self;
  const pick = (p: number): Entry | undefined => inbox[inbox.length - 1 - (p % Math.max(1, inbox.length))];
  const convAt = (i: number): Conv => cast.convs[i] as Conv;
  switch (op.t) {
    case 'send': {
      const conv = convAt(op.conv);
      // In the owner's inbox a 1:1 message is from them or from the other party; a note to self is theirs.
      const from = conv.type === 'group' ? (cast.people[op.from] as string) : op.from % 2 === 0 ? me : conv.id;
      return historyMsg(`m${n}`, conv, from, op.mentions);
    }
    case 'group': {
      const group = convAt(op.conv).id;
      const appinfo =
        op.event === 'create'
          ? groupCreateAppinfo(group)
          : op.event === 'rename'
            ? groupRenameAppinfo({ group, nameRev: n })
            : groupEventAppinfo({ group, event: op.event, made: `${n}` });
      const named = { ...(op.name !== undefined && { name: op.name }), ...(op.rev !== undefined && { nameRev: op.rev }) };
      return historyGroupEvent(appinfo, group, op.event, 'bob', named);
    }
    case 'read': {
      // A seq of the inbox (maybe of another conversation, maybe stale), or any number (maybe past the head).
      const upTo = op.picked ? (pick(op.pick)?.seq ?? 1) : op.raw + 1;
      return historyReadConv(readAppinfo({ reader: me, made: `${n}` }), me, convAt(op.conv), upTo);
    }
    case 'readV1': {
      const seqs = op.picks.map((p) => pick(p)?.seq ?? 1);
      return historyReadSeqs(readAppinfo({ reader: me, made: `${n}` }), me, op.missing ? [...seqs, headSeq + 3] : seqs);
    }
    case 'recall': {
      const target = pick(op.pick);
      return target === undefined ? null : historyRecallOf(target, op.bySender ? target.from : 'carol');
    }
    case 'edit': {
      const target = pick(op.pick);
      if (target === undefined) return null;
      return historyEditOf(target, op.forged ? 'carol' : target.from, HISTORY_T0 + op.editedAt, `e${n}`);
    }
    case 'delete': {
      const seqs = op.picks.map((p) => pick(p)?.seq ?? 1);
      return historyDeleteOf(deleteAppinfo({ owner: me, made: `${n}` }), me, op.missing ? [...seqs, headSeq + 2] : seqs);
    }
    case 'clear': {
      const upTo = op.pick === undefined ? undefined : op.picked ? (pick(op.pick)?.seq ?? 1) : op.raw + 1;
      return historyClearOf(clearAppinfo({ owner: me, made: `${n}` }), me, convAt(op.conv), upTo);
    }
    case 'noise':
      return op.kind === 'receipt'
        ? {
            kind: 'receipt',
            appinfo: receiptAppinfo(n, 1),
            conv: { type: 'user', id: 'bob' },
            from: 'system',
            sendTime: HISTORY_T0,
            referSeq: 1,
            readBy: ['bob'],
          }
        : { kind: 'tick', appinfo: streamMarkerAppinfo(`m${n}`), conv: { type: 'group', id: 'g1' }, from: me, sendTime: HISTORY_T0 };
    case 'dup': {
      const e = pick(op.pick);
      if (e === undefined) return null;
      const { seq: _seq, ...again } = e;
      return again;
    }
  }
}

// ---------------------------------------------------------------- entry builders (the owner's inbox)

export function historyMsg(appinfo: string, conv: Conv, from: string, mentions?: string[], body: Json = { text: appinfo }): NewEntry {
  const e = buildMessageCopy({ appinfo, conv, from, sendTime: HISTORY_T0, type: 'text', body });
  if (mentions !== undefined) e.mentions = mentions;
  return e;
}

export function historyGroupEvent(
  appinfo: string,
  group: string,
  event: HistoryGroupEvent,
  actor: string,
  named: { name?: string; nameRev?: number } = {},
): NewEntry {
  return buildGroupEventEntry({ appinfo, group, event, actor, time: HISTORY_T0, ...named });
}

export function historyReadConv(appinfo: string, self: string, conv: Conv, upToSeq: number): NewEntry {
  return buildConversationReadEntry(self, conv, upToSeq, HISTORY_T0, appinfo);
}

export function historyReadSeqs(appinfo: string, self: string, seqs: number[]): NewEntry {
  return buildReadEntry(self, seqs, HISTORY_T0, appinfo);
}

export function historyRecallOf(target: Entry, by: string): NewEntry {
  return buildRecallEntry(target, by, HISTORY_T0 + 1);
}

export function historyEditOf(target: Entry, by: string, editedAt: number, text: string): NewEntry {
  return buildEditEntry(
    by,
    target,
    { type: 'text', body: { text } },
    editedAt,
    editAppinfo({ editor: by, made: `${target.appinfo}:${editedAt}:${text}` }),
  );
}

export function historyDeleteOf(appinfo: string, self: string, seqs: number[]): NewEntry {
  return buildDeleteEntry(self, seqs, HISTORY_T0, appinfo);
}

export function historyClearOf(appinfo: string, self: string, conv: Conv, upToSeq?: number): NewEntry {
  return buildClearEntry(self, conv, upToSeq, HISTORY_T0, appinfo);
}
