/**
 * ConversationRebuilder contract under write faults: a rebuild is all or nothing. Whatever
 * write step of the rebuild fails — refused, or applied with its answer lost — the index never
 * stays half-rebuilt: once the next append is indexed, the index equals core's recount of the
 * inbox (a half state would be caught up from an old watermark and count twice), and until
 * then a reader is never told an index is exact (headSeq > 0) that is not.
 *
 * Each adapter wraps its index writes in the rig's WriteFaults. A clean rebuild is counted
 * first (n writes); then for k = 1..n a fresh inbox is rebuilt with its k-th write failing.
 * Two starting points: the index intact, and the index dropped (every row and the watermark),
 * as an operator clearing it before a rebuild would.
 */
import { describe, expect, it } from 'vitest';
import { inboxKey, type ConversationRebuildReport, type Entry, type InboxKey, type NewEntry } from '@seqline/core';
import { historyClearOf, historyDeleteOf, historyEditOf, historyMsg, historyReadConv } from '../conversation-history.ts';
import type { WriteFaults } from '../write-faults.ts';
import { uniqueTenant } from './harness.ts';
import { expectIndexMatchesInbox, type ConversationStores } from './conversation-index.oracle.ts';

export interface RebuildFaultRig {
  /** The stores as open now (dropIndex may reopen them). */
  stores(): ConversationStores;
  /** The adapter's rebuild of one inbox, as its inbox writer runs it. */
  rebuild(inbox: InboxKey): Promise<ConversationRebuildReport>;
  /** Removes every index row of the inbox, watermark included, behind the writer's back. */
  dropIndex(inbox: InboxKey): Promise<void>;
  /** Wrapped around every index write the adapter makes. */
  faults: WriteFaults;
  close(): Promise<void>;
}

export interface RebuildFaultContractOptions {
  /** Messages in each inbox (enough for the adapter's rebuild to take several write steps). */
  messages: number;
  /** Write steps a clean rebuild of such an inbox takes at least (keeps the fill big enough); default 1. */
  minWriteSteps?: number;
  /** Per scenario; default 300 s. */
  timeoutMs?: number;
}

const SELF = 'me';
const PAGE = 100;
const bob = { type: 'user', id: 'bob' } as const;
const carol = { type: 'user', id: 'carol' } as const;
const team = { type: 'group', id: 'team' } as const;

/** Messages in three conversations (mentions and own messages among them), then a read, an edit, a delete and a clear. */
async function fillInbox(stores: ConversationStores, inbox: InboxKey, messages: number): Promise<number> {
  const entries: Entry[] = [];
  const add = (e: NewEntry) => entries.push({ ...e, seq: entries.length + 1 });
  for (let i = 0; i < messages; i++) {
    const conv = [bob, team, carol][i % 3] ?? bob;
    const from = i % 7 === 0 ? SELF : conv === team ? 'dave' : conv.id;
    add(historyMsg(`m${i}`, conv, from, conv === team && i % 5 === 1 ? [SELF] : undefined));
  }
  const mine = entries.find((e) => e.from === SELF) as Entry;
  add(historyReadConv('read-bob', SELF, bob, Math.floor(messages / 2)));
  add(historyEditOf(mine, SELF, 1_000, 'edited'));
  add(historyDeleteOf('del', SELF, [2, 5]));
  add(historyClearOf('clear-carol', SELF, carol, Math.floor(messages / 3)));
  for (let i = 0; i < entries.length; i += 100) await stores.timeline.append({ inbox, entries: entries.slice(i, i + 100) });
  return entries.length;
}

export function conversationRebuildFaultContract(
  name: string,
  open: () => Promise<RebuildFaultRig>,
  options: RebuildFaultContractOptions,
): void {
  describe(`ConversationRebuilder contract, a write step failing: ${name}`, () => {
    let rig: RebuildFaultRig | undefined;
    const theRig = (): RebuildFaultRig => {
      if (rig === undefined) throw new Error('rig used before it was opened');
      return rig;
    };

    /** A fresh inbox, filled and checked, its index dropped when the scenario says so. */
    async function prepared(dropped: boolean): Promise<{ inbox: InboxKey; head: number }> {
      const inbox = inboxKey(uniqueTenant(), SELF);
      const head = await fillInbox(theRig().stores(), inbox, options.messages);
      await expectIndexMatchesInbox(theRig().stores(), inbox, SELF, PAGE);
      if (dropped) await theRig().dropIndex(inbox);
      return { inbox, head };
    }

    it.each([
      ['intact', false],
      ['dropped', true],
    ])(
      'index %s before the rebuild: whichever write fails, the next append leaves the index equal to the recount',
      async (_scenario, dropped) => {
        rig = await open();
        try {
          const probe = await prepared(dropped);
          theRig().faults.arm();
          await theRig().rebuild(probe.inbox);
          const steps = theRig().faults.disarm();
          if (dropped) expect(steps, 'write steps of a rebuild').toBeGreaterThanOrEqual(options.minWriteSteps ?? 1);
          for (let k = 1; k <= steps; k++) {
            for (const applied of [false, true]) {
              const { inbox, head } = await prepared(dropped);
              const at = `write ${k} of ${steps} failing ${applied ? 'after it was applied' : 'before it was applied'}`;
              theRig().faults.arm({ failAt: k, applied });
              const outcome = await theRig()
                .rebuild(inbox)
                .then(
                  () => 'resolved',
                  () => 'rejected',
                );
              theRig().faults.disarm();
              expect(outcome, at).toBe('rejected');
              const stores = theRig().stores();
              try {
                // A reader is told nothing is exact (0), or the index is exact at the head.
                if ((await stores.conversations.headSeq(inbox)) !== 0) await expectIndexMatchesInbox(stores, inbox, SELF, PAGE);
                await stores.timeline.append({
                  inbox,
                  entries: [
                    { ...historyMsg('after-1', bob, 'bob'), seq: head + 1 },
                    { ...historyMsg('after-2', team, 'dave', [SELF]), seq: head + 2 },
                  ],
                });
                await expectIndexMatchesInbox(stores, inbox, SELF, PAGE);
              } catch (err) {
                throw new Error(`${at}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
              }
            }
          }
        } finally {
          await rig.close();
          rig = undefined;
        }
      },
      options.timeoutMs ?? 300_000,
    );
  });
}
