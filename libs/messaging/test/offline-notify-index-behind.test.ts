/**
 * A notification's badge counts at least the entries it names, also when the conversation
 * index trails them (on CQL for a moment after each append, and after a failed index write or
 * a lost lease until the next append): the badge waits for the index as `sync` does, and an
 * index still behind fails the job with BadgeIndexBehindError, which the queue retries — no
 * call with a lower badge. The embedded stack (LMDB), its notification jobs reading through a
 * view of the real index that the test holds where it stood.
 */
import {
  CONVERSATIONS_MAX_LIMIT,
  conversationKey,
  inboxKey,
  recountConversations,
  type ConversationIndex,
  type ConversationListPage,
  type InboxKey,
} from '@seqline/core';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadgeIndexBehindError, OFFLINE_NOTIFY_QUEUE, unreadBadge, type OfflineNotifyJob } from '../src/index.ts';
import {
  badgeOf,
  eventually,
  notifiedTenants,
  NOTIFY_SECRET,
  openNotifyRig,
  type NotifyBody,
  type NotifyRig,
} from './support/offline-notify-rig.ts';

/**
 * The real index, except that one inbox can be held as it stood: its watermark and its
 * conversations (list and point reads) as read when held, until released. Pass-through otherwise.
 */
class HeldInboxIndex {
  private held: { inbox: InboxKey; watermark: number; page: ConversationListPage } | undefined;
  headSeqCalls = 0;
  onHeadSeq: (call: number) => void = () => undefined;

  constructor(private readonly real: ConversationIndex) {}

  async hold(inbox: InboxKey): Promise<void> {
    const [watermark, page] = await Promise.all([
      this.real.headSeq(inbox),
      this.real.listConversations({ inbox, limit: CONVERSATIONS_MAX_LIMIT }),
    ]);
    expect(page.hasMore).toBe(false); // one page holds all of it
    this.headSeqCalls = 0;
    this.held = { inbox, watermark, page };
  }

  release(): void {
    this.held = undefined;
  }

  view(): ConversationIndex {
    const { real } = this;
    const heldOf = (inbox: InboxKey) => (this.held?.inbox === inbox ? this.held : undefined);
    return {
      listConversations: async ({ inbox: i, ...p }) => {
        const held = heldOf(i);
        if (!held) return real.listConversations({ inbox: i, ...p });
        const below = held.page.convs.filter((s) => p.beforeLastSeq === undefined || s.lastSeq < p.beforeLastSeq);
        return { convs: below.slice(0, p.limit), hasMore: below.length > p.limit };
      },
      getConversation: async ({ inbox: i, conv: c }) => {
        const held = heldOf(i);
        if (!held) return real.getConversation({ inbox: i, conv: c });
        return held.page.convs.find((s) => conversationKey(s.conv) === conversationKey(c)) ?? null;
      },
      headSeq: async (i) => {
        const held = heldOf(i);
        if (!held) return real.headSeq(i);
        this.onHeadSeq(++this.headSeqCalls);
        return held.watermark;
      },
      conversationEntries: (input) => real.conversationEntries(input),
      hiddenSeqs: (input) => real.hiddenSeqs(input),
    };
  }
}

const WINDOW_MS = 200;
let rig: NotifyRig;
let receiver: HookReceiver;
let index: HeldInboxIndex;
let notified: ReturnType<typeof notifiedTenants>;
let apps = 0;

beforeAll(async () => {
  rig = await openNotifyRig('offline-notify-index-behind', {
    workerStores: (stores) => {
      index = new HeldInboxIndex(stores.conversations);
      return { ...stores, conversations: index.view() };
    },
  });
  receiver = await startHookReceiver({ secret: NOTIFY_SECRET });
  notified = notifiedTenants(rig, receiver, 'ib', WINDOW_MS);
});
afterAll(async () => {
  await rig.close();
  await receiver.close();
});

const tenant = (): string => notified.tenant();
const callsTo = (t: string): NotifyBody[] => notified.callsTo(t);

async function sendToBob(t: string): Promise<number> {
  const { seq } = await rig.messaging.send(
    { tenant: t, user: 'alice' },
    { appinfo: `ib${++apps}`, to: { user: 'bob' }, type: 'text', body: { text: 'hi' } },
  );
  return seq;
}

/** Bob's unread recounted from his raw inbox. */
async function recount(t: string): Promise<number> {
  const entries = await rig.engine.timeline.readAfter({ inbox: inboxKey(t, 'bob'), afterSeq: 0, limit: 100_000 });
  let n = 0;
  for (const record of recountConversations(entries, 'bob').values()) n += record.unread;
  return n;
}

/** The notification job of tenant `t` still in the job store (failed attempts and their last error). */
async function pendingJob(t: string): Promise<{ attempts: number; lastError?: string } | undefined> {
  const jobs = await rig.engine.jobs.list({ queue: OFFLINE_NOTIFY_QUEUE });
  return jobs.find((j) => (j.payload as unknown as OfflineNotifyJob).tenant === t);
}

describe('the badge of a notification whose entries the index has not reached', () => {
  it('the job fails (BadgeIndexBehindError) and is retried, sending no lower badge; once the index catches up, the badge equals the recount', async () => {
    const t = tenant();
    await sendToBob(t);
    await eventually('the first notification', () => callsTo(t).length === 1);
    expect(callsTo(t)[0]!.badge).toBe(1);

    // The index stays where it is (unread 1) while a second message lands and its window closes.
    await index.hold(inboxKey(t, 'bob'));
    const second = await sendToBob(t);
    await eventually(
      'a second call, or the job failed twice',
      async () => callsTo(t).length > 1 || ((await pendingJob(t))?.attempts ?? 0) >= 2,
    );
    expect(callsTo(t)).toHaveLength(1); // nothing sent with the badge the held index gives (1)
    const job = await pendingJob(t);
    expect(job?.lastError).toContain(`behind seq ${second}`);

    index.release();
    await eventually('the retried notification', () => callsTo(t).length === 2);
    const call = callsTo(t)[1]!;
    expect(call.entries.map((e) => e.seq)).toEqual([second]);
    expect(call.badge).toBe(await recount(t));
    expect(call.badge).toBe(2);
    expect(call.badge).toBe(await badgeOf(rig, t, 'bob'));
  });

  it('unreadBadge waits for the index within syncConvsWaitMs: counted once it catches up, a typed OVERLOADED error while behind', async () => {
    const t = tenant();
    const bob = inboxKey(t, 'bob');
    await sendToBob(t);
    await index.hold(bob);
    const second = await sendToBob(t);
    const deps = { stores: { ...rig.deps.stores, conversations: index.view() }, policy: { syncConvsWaitMs: 50 } };

    const behind = await unreadBadge(deps, t, 'bob', second).catch((err: unknown) => err);
    expect(behind).toBeInstanceOf(BadgeIndexBehindError);
    expect(behind).toMatchObject({ code: 'OVERLOADED', inbox: bob, seq: second, watermark: second - 1 });
    expect(index.headSeqCalls).toBeGreaterThan(1);
    // Without a seq to reach, the index is read as it stands.
    expect(await unreadBadge(deps, t, 'bob')).toEqual({ badge: 1, capped: false });

    index.onHeadSeq = (call) => call === 2 && index.release(); // it catches up while the badge waits
    await index.hold(bob);
    expect(await unreadBadge({ ...deps, policy: { syncConvsWaitMs: 2_000 } }, t, 'bob', second)).toEqual({ badge: 2, capped: false });
    index.onHeadSeq = () => undefined;
  });
});
