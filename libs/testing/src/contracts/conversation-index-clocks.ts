/**
 * The ConversationIndex contract's clock case: writers whose wall clocks disagree by minutes
 * take an inbox in turns (a takeover, a restart), and every answer still equals the recount of
 * the inbox. A wall clock may jump either way on any machine (NTP, a VM resumed, an operator);
 * the index's writes must be ordered by what they describe, not by when a writer thinks it is.
 * An adapter whose writes take timestamps opens each writer with the clock given; one whose
 * writes take none (LMDB: one transaction per write) may ignore it.
 */
import { describe, expect, it } from 'vitest';
import { inboxKey, type Clock, type Entry, type InboxKey } from '@seqline/core';
import { historyMsg, historyReadConv } from '../conversation-history.ts';
import { uniqueName, uniqueTenant, type OpenedStore } from './harness.ts';
import { expectIndexMatchesInbox, type ConversationStores } from './conversation-index.oracle.ts';

/** Opens the stores of one writer (a process) on `dataKey`, its wall clock `clock`. */
export type ClockedOpener = (dataKey: string, clock: Clock) => Promise<OpenedStore<ConversationStores>>;

const MINUTES_10 = 10 * 60_000;

/** The system clock moved by an offset the test sets: a jump is a change of `offsetMs`. */
export class JumpingClock implements Clock {
  offsetMs: number;

  constructor(offsetMs = 0) {
    this.offsetMs = offsetMs;
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}

export function conversationIndexClockCases(open: ClockedOpener, self: string): void {
  describe('writers whose wall clocks jump', () => {
    it('one jumps back 10 min between two appends, the next is 10 min ahead, the third 10 min behind: unread and last equal the recount', async () => {
      const dataKey = uniqueName('clocks');
      const inbox = inboxKey(uniqueTenant(), self);
      const bob = { type: 'user', id: 'bob' } as const;
      const team = { type: 'group', id: 'team' } as const;
      const at = (entry: ReturnType<typeof historyMsg>, seq: number): Entry => ({ ...entry, seq });

      await asWriter(open, dataKey, new JumpingClock(), async (stores, clock) => {
        await append(stores, inbox, [at(historyMsg('m1', bob, 'bob'), 1), at(historyMsg('m2', bob, 'bob'), 2)]);
        await append(stores, inbox, [at(historyMsg('m3', team, 'carol', [self]), 3)]);
        clock.offsetMs -= MINUTES_10;
        await append(stores, inbox, [at(historyMsg('m4', bob, 'bob'), 4), at(historyReadConv('r5', self, bob, 2), 5)]);
        await expectIndexMatchesInbox(stores, inbox, self, 2);
      });
      // A new owner (its seqs above the ceiling the first one claimed), its clock 10 minutes ahead.
      await asWriter(open, dataKey, new JumpingClock(MINUTES_10), async (stores) => {
        await append(stores, inbox, [at(historyMsg('m6', bob, 'bob'), 10_001), at(historyMsg('m7', team, 'carol'), 10_002)]);
        await append(stores, inbox, [at(historyReadConv('r8', self, team, 10_002), 10_003)]);
        await expectIndexMatchesInbox(stores, inbox, self, 2);
      });
      // The next owner, 10 minutes behind: every write of its own lands after the previous owner's.
      await asWriter(open, dataKey, new JumpingClock(-MINUTES_10), async (stores) => {
        await append(stores, inbox, [at(historyMsg('m9', bob, 'bob'), 20_001)]);
        await append(stores, inbox, [at(historyReadConv('r10', self, bob, 20_001), 20_002)]);
        await append(stores, inbox, [at(historyMsg('m11', bob, 'bob'), 20_003), at(historyMsg('m12', team, 'carol'), 20_004)]);
        expect(await stores.conversations.getConversation({ inbox, conv: bob })).toMatchObject({
          unread: 1,
          readSeq: 20_001,
          lastMsgSeq: 20_003,
          last: { appinfo: 'm11' },
        });
        expect(await stores.conversations.getConversation({ inbox, conv: team })).toMatchObject({
          unread: 1,
          mentions: 0,
          lastMsgSeq: 20_004,
          last: { appinfo: 'm12' },
        });
        expect((await stores.conversations.listConversations({ inbox, limit: 10 })).convs.map((c) => c.conv.id)).toEqual(['team', 'bob']);
        await expectIndexMatchesInbox(stores, inbox, self, 2);
      });
    }, 60_000);
  });
}

async function asWriter(
  open: ClockedOpener,
  dataKey: string,
  clock: JumpingClock,
  run: (stores: ConversationStores, clock: JumpingClock) => Promise<void>,
): Promise<void> {
  const opened = await open(dataKey, clock);
  try {
    await run(opened.store, clock);
  } finally {
    await opened.close();
  }
}

async function append(stores: ConversationStores, inbox: InboxKey, entries: Entry[]): Promise<void> {
  const outcomes = await stores.timeline.append({ inbox, entries });
  expect(outcomes.map((o) => o.seq)).toEqual(entries.map((e) => e.seq));
}
