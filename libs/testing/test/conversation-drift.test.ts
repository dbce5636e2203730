/**
 * No drift: core's conversation index (indexEntrySync, through an in-memory adapter) applied to
 * random inbox histories one entry at a time equals, after every step, a recount of the whole
 * inbox — records and side tables alike. The histories are the ones the ConversationIndex
 * contract appends to every store (../src/conversation-history.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationKey, isActivity, type Entry } from '@seqline/core';
import { defaultCast, historyEntryFor, historyOpArb, type HistoryOp } from '../src/index.ts';
import { InMemoryConversationIndex } from './in-memory-conversation-index.ts';

const ME = 'me';
const CAST = defaultCast(ME);
const opArb = historyOpArb(CAST);

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

function run(ops: Array<[HistoryOp, number]>): InMemoryConversationIndex {
  const ix = new InMemoryConversationIndex(ME);
  ops.forEach(([op, gap], n) => {
    const e = historyEntryFor(op, CAST, ix.entries, ix.headSeq, n);
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
