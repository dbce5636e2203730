/**
 * A sync answer's `convs` are at or past the entries that name them, also when the index trails
 * the entries (as it does on CQL for a moment after every append, and after a failed index
 * write until the next append): the sync waits for the index within its bound, and what the
 * bound leaves behind is named in `convsPending` — never sent older than its entry, never
 * silently left out. The real embedded engine, seen through an index view held behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  conversationKey,
  inboxKey,
  type Conv,
  type ConversationIndex,
  type ConversationState,
  type InboxKey,
  type NewEntry,
} from '@seqline/core';
import { historyReadConv } from '@seqline/testing';
import { createMessaging, type Messaging } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

let rig: EmbeddedRig;
beforeAll(async () => {
  rig = await openEmbeddedRig('sync-convs');
});
afterAll(async () => {
  await rig.close();
});

/**
 * The real index as it stood at `heldAt` for one inbox: its watermark no higher, each
 * conversation as snapshotted then (absent if it had none). Released by `release()` — a test
 * releases it from inside a watermark read, so no timing decides when.
 */
class HeldIndex {
  private released = false;
  headSeqCalls = 0;
  onHeadSeq: (call: number) => void = () => undefined;

  constructor(
    private readonly real: ConversationIndex,
    private readonly inbox: InboxKey,
    private readonly heldAt: number,
    private readonly snapshot: Map<string, ConversationState | null>,
  ) {}

  release(): void {
    this.released = true;
  }

  view(): ConversationIndex {
    const { real } = this;
    const held = (inbox: InboxKey) => !this.released && inbox === this.inbox;
    return {
      listConversations: (input) => real.listConversations(input),
      conversationEntries: (input) => real.conversationEntries(input),
      hiddenSeqs: (input) => real.hiddenSeqs(input),
      getConversation: async ({ inbox: i, conv: c }) =>
        held(i) ? (this.snapshot.get(conversationKey(c)) ?? null) : real.getConversation({ inbox: i, conv: c }),
      headSeq: async (i) => {
        if (i === this.inbox) this.onHeadSeq(++this.headSeqCalls);
        return held(i) ? Math.min(this.heldAt, await real.headSeq(i)) : real.headSeq(i);
      },
    };
  }
}

let users = 0;
const bob = (): string => `bob${++users}`;
const alice: Conv = { type: 'user', id: 'alice' };
const fromAlice = (n: number): NewEntry => ({
  kind: 'msg',
  appinfo: `a${users}-${n}`,
  conv: alice,
  from: 'alice',
  sendTime: 1_763_700_000_000 + n,
  type: 'text',
  body: { n },
});

/** Bob's inbox with one message from alice, then the index held there while a second one lands. */
async function heldAfterFirst(user: string): Promise<{ held: HeldIndex; messaging: Messaging; first: number; second: number }> {
  const inbox = inboxKey('t', user);
  const [first] = await rig.owner.append({ inbox, entries: [fromAlice(1)] });
  const snapshot = new Map([[conversationKey(alice), await rig.engine.conversations.getConversation({ inbox, conv: alice })]]);
  const held = new HeldIndex(rig.engine.conversations, inbox, first!.seq, snapshot);
  const [second] = await rig.owner.append({ inbox, entries: [fromAlice(2)] });
  return { held, messaging: messagingOver(held.view(), 50), first: first!.seq, second: second!.seq };
}

function messagingOver(conversations: ConversationIndex, syncConvsWaitMs: number): Messaging {
  return createMessaging({
    ...rig.deps,
    stores: { ...rig.deps.stores, conversations },
    policy: { ...rig.deps.policy, syncConvsWaitMs },
  });
}

describe('sync convs against an index that trails the entries', () => {
  it('a state older than its entry is waited for: the answer has it at or past the entry', async () => {
    const user = bob();
    const { held, messaging, second } = await heldAfterFirst(user);
    held.onHeadSeq = (call) => call === 2 && held.release(); // the index catches up while sync polls
    const r = await messaging.sync({ tenant: 't', user }, 0, 10);
    expect(r.entries.map((e) => e.seq).at(-1)).toBe(second);
    expect(r.convs).toEqual([expect.objectContaining({ conv: alice, unread: 2, lastSeq: second, asOfSeq: second })]);
    expect(r.convsPending).toBeUndefined();
    expect(held.headSeqCalls).toBe(2);
  });

  it('a conversation the index has not got yet (a new one: a group just created) is waited for too', async () => {
    const user = bob();
    const inbox = inboxKey('t', user);
    const held = new HeldIndex(rig.engine.conversations, inbox, 0, new Map());
    const [only] = await rig.owner.append({ inbox, entries: [fromAlice(1)] });
    held.onHeadSeq = (call) => call === 3 && held.release();
    const r = await messagingOver(held.view(), 2_000).sync({ tenant: 't', user }, 0, 10);
    expect(r.convs).toEqual([expect.objectContaining({ conv: alice, asOfSeq: only!.seq })]);
    expect(r.convsPending).toBeUndefined();
  });

  it('past the bound: the conversation is named in convsPending, not sent older than its entry', async () => {
    const user = bob();
    const { held, messaging, first, second } = await heldAfterFirst(user); // never released
    const r = await messaging.sync({ tenant: 't', user }, 0, 10);
    expect(r.entries.map((e) => e.seq)).toEqual([first, second]);
    expect(r.convs).toEqual([]);
    expect(r.convsPending).toEqual([alice]);
    expect(held.headSeqCalls).toBeGreaterThan(1);
    // A page that ends before the held watermark is exact as it is: nothing waits, nothing pending.
    const older = await messaging.sync({ tenant: 't', user }, 0, 1);
    expect(older.convs).toEqual([expect.objectContaining({ conv: alice, asOfSeq: first })]);
    expect(older.convsPending).toBeUndefined();
  });

  it('an index at or past the entries answers at once: no wait, a conversation it lacks is absent, not pending', async () => {
    const user = bob();
    const inbox = inboxKey('t', user);
    const nobody: Conv = { type: 'user', id: 'nobody' };
    await rig.owner.append({ inbox, entries: [fromAlice(1), { ...historyReadConv(`read-${user}`, user, nobody, 5) }] });
    const held = new HeldIndex(rig.engine.conversations, inbox, Number.MAX_SAFE_INTEGER, new Map());
    held.release();
    const r = await messagingOver(held.view(), 10_000).sync({ tenant: 't', user }, 0, 10);
    expect(r.convs.map((c) => c.conv)).toEqual([alice]);
    expect(r.convsPending).toBeUndefined();
    expect(held.headSeqCalls).toBe(1); // the read of `nobody` found nothing: the watermark says absent
  });
});
