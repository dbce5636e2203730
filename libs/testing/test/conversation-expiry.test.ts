/**
 * Expiry without drift: an inbox whose oldest entries expire (a TTL drops them oldest first),
 * its index moved to the new horizon with core's expireConversations and more entries appended
 * after, equals a recount of the entries left — records (cursors below the horizon cleared:
 * keptRecord) and side tables at or above the horizon. Two fields keep what only the expired
 * entries could tell, as docs/decisions.md ("Conversation index follows the timeline's
 * retention") says: `asOfSeq` still counts a delete or read by seqs whose target expired after
 * it, and a title still comes from an expired notice that outranks every one left.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  conversationKey,
  groupTitleOf,
  isActivity,
  keptRecord,
  recountInboxIndex,
  titleWins,
  type ConvRecord,
  type Entry,
  type GroupTitle,
} from '@seqline/core';
import { defaultCast, historyEntryFor, historyOpArb, type HistoryOp } from '../src/index.ts';
import { InMemoryConversationIndex, sortedState } from './in-memory-conversation-index.ts';

const ME = 'me';
const CAST = defaultCast(ME);
const opsArb = fc.array(fc.tuple(historyOpArb(CAST), fc.nat({ max: 2 })), { maxLength: 60, size: 'max' });

interface Run {
  ix: InMemoryConversationIndex;
  /** Every entry ever appended, expired ones included. */
  all: Entry[];
  horizon: number;
  /** Head seq when each conversation was last dropped by an expiry. */
  droppedAt: Map<string, number>;
}

function appendAll(run: Run, ops: Array<[HistoryOp, number]>, from: number): void {
  ops.forEach(([op, gap], n) => {
    const input = historyEntryFor(op, CAST, run.ix.entries, run.ix.headSeq, from + n);
    if (input === null) return;
    const e = run.ix.append(input, gap);
    if (e !== null) run.all.push(e);
  });
}

/** A delete or read by seqs naming an entry that expired (it touched that entry's conversation then). */
function namesExpired(e: Entry, run: Run): boolean {
  if (e.kind !== 'delete' && e.kind !== 'read') return false;
  const named = e.seqs ?? (e.referSeq === undefined ? [] : [e.referSeq]);
  return named.some((seq) => seq < run.horizon && run.all.some((x) => x.seq === seq && x.seq < e.seq && isActivity(x)));
}

/** The title as the incremental index keeps it: the winning notice since the conversation was last (re)created. */
function titleSinceCreated(run: Run, key: string): GroupTitle | null {
  let best: GroupTitle | null = null;
  const since = run.droppedAt.get(key) ?? 0;
  for (const e of run.all) {
    if (e.seq <= since || conversationKey(e.conv) !== key) continue;
    const title = groupTitleOf(e);
    if (title !== null && titleWins(best, title)) best = title;
  }
  return best;
}

function expectMatchesRecountOfKept(run: Run): void {
  const { ix, horizon } = run;
  const oracle = recountInboxIndex(ix.entries, ME);
  const records = new Map<string, ConvRecord>();
  for (const [key, counted] of oracle.records) {
    const want = keptRecord(counted, horizon);
    const have = ix.records.get(key);
    if (have !== undefined && have.asOfSeq !== want.asOfSeq) {
      // Only a surviving delete or read by seqs whose target expired after it touched the conversation later.
      expect(have.asOfSeq, `asOfSeq of ${key}`).toBeGreaterThan(want.asOfSeq);
      const toucher = ix.entryAt(have.asOfSeq);
      expect(toucher !== undefined && namesExpired(toucher, run), `asOfSeq of ${key} from ${JSON.stringify(toucher)}`).toBe(true);
      want.asOfSeq = have.asOfSeq;
    }
    const title = titleSinceCreated(run, key);
    if (title !== null && (want.title !== title.name || want.titleRev !== title.rev)) {
      // The winning notice expired, and one with a lower revision is left.
      expect(title.rev).toBeGreaterThan(want.titleRev ?? -1);
      want.title = title.name;
      want.titleRev = title.rev;
    }
    records.set(key, want);
  }
  expect(sortedState(ix.stateAbove())).toEqual(sortedState({ ...oracle, records }));
}

describe('conversation index: expiry without drift', () => {
  it('after entries below a horizon expire and more are appended, equals the recount of the entries left', () => {
    fc.assert(
      fc.property(opsArb, fc.nat(), opsArb, fc.nat(), opsArb, (before, cut1, between, cut2, after) => {
        const run: Run = { ix: new InMemoryConversationIndex(ME), all: [], horizon: 0, droppedAt: new Map() };
        const expireAt = (cut: number) => {
          // Any horizon up to one past the head: nothing, some, or every entry expires.
          const horizon = Math.max(run.horizon, 1 + (cut % (run.ix.headSeq + 1)));
          const expiry = run.ix.expire(horizon);
          run.horizon = horizon;
          for (const rec of expiry.dropped) run.droppedAt.set(conversationKey(rec.conv), run.ix.headSeq);
          expectMatchesRecountOfKept(run);
        };
        appendAll(run, before, 0);
        expireAt(cut1);
        appendAll(run, between, 1000);
        expectMatchesRecountOfKept(run);
        expireAt(cut2);
        appendAll(run, after, 2000);
        expectMatchesRecountOfKept(run);
      }),
      { numRuns: 300 },
    );
  });

  it('an expired message no longer counts; a conversation whose activity all expired leaves the index', () => {
    const ix = new InMemoryConversationIndex(ME);
    const bob = { type: 'user', id: 'bob' } as const;
    const carol = { type: 'user', id: 'carol' } as const;
    const msg = (appinfo: string, conv: typeof bob | typeof carol, mentions?: string[]) =>
      historyEntryFor({ t: 'send', conv: conv.id === 'bob' ? 0 : 1, from: 1, mentions }, CAST, ix.entries, ix.headSeq, Number(appinfo));
    for (const [n, conv] of [
      [1, bob],
      [2, carol],
      [3, bob],
      [4, bob],
    ] as const) {
      ix.append(msg(String(n), conv) as NonNullable<ReturnType<typeof msg>>);
    }
    expect(ix.records.get('user:bob')?.unread).toBe(3);
    const expiry = ix.expire(4);
    expect(expiry.dropped.map((r) => conversationKey(r.conv))).toEqual(['user:carol']);
    expect(ix.records.get('user:bob')).toMatchObject({ unread: 1, lastSeq: 4, lastMsgSeq: 4 });
    expect(ix.records.has('user:carol')).toBe(false);
  });
});
