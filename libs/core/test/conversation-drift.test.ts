/**
 * No drift: random inbox histories applied one entry at a time through the two-step API equal,
 * after every step, a recount of the whole inbox — records and side tables alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationKey, isActivity } from '../src/index.ts';
import type { Conv, Entry, NewEntry } from '../src/index.ts';
import {
  InMemoryConversationIndex,
  T0,
  clearOf,
  deleteOf,
  editOf,
  groupEvent,
  msg,
  readConv,
  readSeqs,
  recallOf,
} from './conversation-driver.ts';

const ME = 'me';
const CONVS: Conv[] = [
  { type: 'user', id: 'bob' },
  { type: 'user', id: 'carol' },
  { type: 'user', id: ME },
  { type: 'group', id: 'g1' },
  { type: 'group', id: 'g2' },
];
const PEOPLE = [ME, 'bob', 'carol'];

/** Picks are resolved against the inbox when the op runs (the entries do not exist yet when generated). */
type Op =
  | { t: 'send'; conv: number; from: number; mentions: string[] | undefined }
  | { t: 'group'; conv: number; event: 'create' | 'add' | 'remove' | 'rename' | 'tier'; name: string | undefined; rev: number | undefined }
  | { t: 'read'; conv: number; pick: number; raw: number; picked: boolean }
  | { t: 'readV1'; picks: number[]; missing: boolean }
  | { t: 'recall'; pick: number; bySender: boolean }
  | { t: 'edit'; pick: number; forged: boolean; editedAt: number }
  | { t: 'delete'; picks: number[]; missing: boolean }
  | { t: 'clear'; conv: number; pick: number | undefined; raw: number; picked: boolean }
  | { t: 'noise'; kind: 'receipt' | 'tick' }
  | { t: 'dup'; pick: number };

const idx = (n: number) => fc.nat({ max: n - 1 });
/** How far back from the newest entry a pick reaches: mostly the last few (the last message is where bugs hide). */
const back = fc.oneof({ weight: 3, arbitrary: fc.nat({ max: 3 }) }, { weight: 1, arbitrary: fc.nat() });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant('send' as const),
      conv: idx(CONVS.length),
      from: idx(PEOPLE.length),
      mentions: fc.option(fc.subarray([ME, 'bob', '@all'], { minLength: 1 }), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('group' as const),
      conv: fc.constantFrom(3, 4),
      event: fc.constantFrom('create', 'add', 'remove', 'rename', 'tier'),
      name: fc.option(fc.constantFrom('alpha', 'beta', 'gamma'), { nil: undefined }),
      rev: fc.option(fc.nat({ max: 3 }), { nil: undefined }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('read' as const),
      conv: idx(CONVS.length),
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
  { weight: 2, arbitrary: fc.record({ t: fc.constant('edit' as const), pick: back, forged: fc.boolean(), editedAt: fc.nat({ max: 4 }) }) },
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
      conv: idx(CONVS.length),
      pick: fc.option(back, { nil: undefined }),
      raw: fc.nat({ max: 80 }),
      picked: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('noise' as const), kind: fc.constantFrom('receipt', 'tick') }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('dup' as const), pick: back }) },
);

/** The entry an op writes into ME's inbox, or null when it has nothing to act on yet. */
function entryFor(op: Op, ix: InMemoryConversationIndex, n: number): NewEntry | null {
  const all = ix.entries;
  const pick = (p: number): Entry | undefined => all[all.length - 1 - (p % Math.max(1, all.length))];
  switch (op.t) {
    case 'send': {
      const conv = CONVS[op.conv] as Conv;
      // In ME's inbox a 1:1 message is from ME or from the other party; a note to self is from ME.
      const from = conv.type === 'group' ? (PEOPLE[op.from] as string) : op.from % 2 === 0 ? ME : conv.id;
      return msg(`m${n}`, conv, from, op.mentions);
    }
    case 'group': {
      // Names and revisions in any order (fanout jobs of one group race), with or without a
      // revision (notices from before renames), or no name at all (notices from before names).
      const named = { ...(op.name !== undefined && { name: op.name }), ...(op.rev !== undefined && { nameRev: op.rev }) };
      return groupEvent(`group:${(CONVS[op.conv] as Conv).id}:${n}`, (CONVS[op.conv] as Conv).id, op.event, 'bob', named);
    }
    case 'read': {
      // A seq of the inbox (maybe of another conversation, maybe stale), or any number (maybe past the head).
      const upTo = op.picked ? (pick(op.pick)?.seq ?? 1) : op.raw + 1;
      return readConv(`read:${n}`, ME, CONVS[op.conv] as Conv, upTo);
    }
    case 'readV1': {
      const seqs = op.picks.map((p) => pick(p)?.seq ?? 1);
      return readSeqs(`read:${n}`, ME, op.missing ? [...seqs, ix.headSeq + 3] : seqs);
    }
    case 'recall': {
      const target = pick(op.pick);
      return target === undefined ? null : recallOf(target, op.bySender ? target.from : 'carol');
    }
    case 'edit': {
      const target = pick(op.pick);
      if (target === undefined) return null;
      return editOf(target, op.forged ? 'carol' : target.from, T0 + op.editedAt, `e${n}`);
    }
    case 'delete': {
      const seqs = op.picks.map((p) => pick(p)?.seq ?? 1);
      return deleteOf(`delete:${n}`, ME, op.missing ? [...seqs, ix.headSeq + 2] : seqs);
    }
    case 'clear': {
      const upTo = op.pick === undefined ? undefined : op.picked ? (pick(op.pick)?.seq ?? 1) : op.raw + 1;
      return clearOf(`clear:${n}`, ME, CONVS[op.conv] as Conv, upTo);
    }
    case 'noise':
      return op.kind === 'receipt'
        ? {
            kind: 'receipt',
            appinfo: `receipt:${n}:1`,
            conv: { type: 'user', id: 'bob' },
            from: 'system',
            sendTime: T0,
            referSeq: 1,
            readBy: ['bob'],
          }
        : { kind: 'tick', appinfo: `tick:${n}`, conv: { type: 'group', id: 'g1' }, from: ME, sendTime: T0 };
    case 'dup': {
      const e = pick(op.pick);
      if (e === undefined) return null;
      const { seq: _seq, ...again } = e;
      return again;
    }
  }
}

/**
 * The title stated plainly: of the conversation's group notices (not group.tier) that carry a
 * name, the one with the highest revision (absent: 0), the later one on a tie; none for 1:1.
 */
function newestName(entries: readonly Entry[], key: string): string | undefined {
  let best: { name: string; rev: number } | undefined;
  for (const e of entries) {
    if (e.kind !== 'group' || e.type === 'group.tier' || conversationKey(e.conv) !== key) continue;
    const body = e.body as { name?: unknown; nameRev?: unknown };
    if (typeof body.name !== 'string') continue;
    const rev = typeof body.nameRev === 'number' ? body.nameRev : 0;
    if (best === undefined || rev >= best.rev) best = { name: body.name, rev };
  }
  return best?.name;
}

function run(ops: Array<[Op, number]>): InMemoryConversationIndex {
  const ix = new InMemoryConversationIndex(ME);
  ops.forEach(([op, gap], n) => {
    const e = entryFor(op, ix, n);
    if (e === null) return;
    ix.append(e, gap);
    ix.expectNoDrift();
    expect(Math.max(...ix.rounds)).toBeLessThanOrEqual(2);
  });
  return ix;
}

describe('conversation index: no drift', () => {
  it('equals a recount of the inbox after every step', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(opArb, fc.nat({ max: 2 })), { maxLength: 80, size: 'max' }), (ops) => {
        run(ops);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the invariants a client relies on', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(opArb, fc.nat({ max: 2 })), { maxLength: 80, size: 'max' }), (ops) => {
        const ix = run(ops);
        for (const [key, rec] of ix.records) {
          expect(conversationKey(rec.conv)).toBe(key);
          expect(rec.readSeq).toBeLessThanOrEqual(rec.lastSeq);
          expect(rec.clearedSeq).toBeLessThanOrEqual(rec.lastSeq);
          expect(rec.mentions).toBeLessThanOrEqual(rec.unread);
          expect(rec.asOfSeq).toBeLessThanOrEqual(ix.headSeq);
          const last = ix.lastOf(key);
          if (last !== null) {
            expect(isActivity(last) && last.seq > rec.clearedSeq && !ix.deleted.has(last.seq)).toBe(true);
            expect(conversationKey(last.conv)).toBe(key);
          }
          expect(rec.title, `title of ${key}`).toBe(newestName(ix.entries, key));
        }
      }),
      { numRuns: 100 },
    );
  });
});
