/**
 * Offline-notification scenarios over real sockets, run against the embedded server
 * (offline-notify.test.ts) and the distributed stack (apps/worker/test/offline-notify.distributed.test.ts):
 * a user with no socket gets one signed call per window with the badge the `conversations` op
 * reports; a user with a socket open (on the gateway) gets none. A member of a huge group gets
 * its stream side in the badge: exact up to BADGE_STREAM_ROWS rows above the cursor, past that a
 * lower bound flagged `badgeCapped`.
 */
import { BADGE_STREAM_ROWS } from '@seqline/messaging';
import type { HookReceiver } from '@seqline/testing';
import { describe, expect, it } from 'vitest';
import type { TestClient } from './harness.ts';

export const NOTIFY_SECRET = 'notify-secret-0123456789abcdef';
export const NOTIFY_WINDOW_MS = 500;

export function notifyEnv(receiver: HookReceiver): Record<string, string> {
  return { SEQLINE_HOOK_SECRET: NOTIFY_SECRET, SEQLINE_NOTIFY_URL: receiver.url, SEQLINE_NOTIFY_WINDOW_MS: String(NOTIFY_WINDOW_MS) };
}

export interface NotifyScenarioContext {
  connect(user: string): Promise<TestClient>;
  /** A fresh user id. */
  id(prefix: string): string;
  receiver: HookReceiver;
  /** `owner` creates a huge (read-fanout) group with `members`; returns its id. */
  hugeGroup(owner: TestClient, members: string[]): Promise<string>;
}

interface NotifyBody {
  type: string;
  user: string;
  badge: number;
  badgeCapped?: true;
  entries: Array<{ seq: number; conv: { type: string; id: string }; from: string; appinfo: string; mention: boolean }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function unreadTotal(client: TestClient): Promise<number> {
  const r = await client.ok<{ convs: Array<{ unread: number; unreadCapped?: true }> }>('conversations', { limit: 500 });
  expect(r.convs.filter((c) => c.unreadCapped)).toEqual([]);
  return r.convs.reduce((n, c) => n + c.unread, 0);
}

export function describeOfflineNotify(mode: string, context: () => NotifyScenarioContext): void {
  const callsFor = (user: string) =>
    context()
      .receiver.accepted()
      .map((c) => c.json as NotifyBody)
      .filter((b) => b.user === user);
  let apps = 0;
  const send = (from: TestClient, to: string, text: string) =>
    from.ok<{ seq: number }>('send', { appinfo: `on${Date.now().toString(36)}${++apps}`, to: { user: to }, type: 'text', body: { text } });
  /** `n` messages to a group, a few in flight at once. */
  const sendToGroup = async (from: TestClient, group: string, n: number) => {
    for (let i = 0; i < n; i += 10) {
      const batch = Array.from({ length: Math.min(10, n - i) }, () =>
        from.ok('send', { appinfo: `og${Date.now().toString(36)}${++apps}`, to: { group }, type: 'text', body: { text: 'all' } }),
      );
      await Promise.all(batch);
    }
  };

  describe(`offline notifications (${mode})`, () => {
    it('an offline user: 5 messages in a window make one call with 5 entries, a later one a second, each with the badge', async () => {
      const ctx = context();
      const bob = ctx.id('bob');
      const alice = await ctx.connect(ctx.id('alice'));
      // Sent together: sequential sends on a loaded machine could outlast the window and split it.
      await Promise.all([0, 1, 2, 3, 4].map((i) => send(alice, bob, `m${i}`)));
      await until('the first call', () => callsFor(bob).length >= 1);
      await sleep(NOTIFY_WINDOW_MS * 2);
      expect(callsFor(bob)).toHaveLength(1);
      const [first] = callsFor(bob) as [NotifyBody];
      expect(first.type).toBe('notify');
      expect(first.entries).toHaveLength(5);
      expect(first.entries.every((e) => e.from === alice.user && e.conv.type === 'user' && e.conv.id === alice.user && !e.mention)).toBe(
        true,
      );
      expect(first.badge).toBe(5);

      await send(alice, bob, 'again');
      await until('the second call', () => callsFor(bob).length >= 2);
      const second = callsFor(bob)[1] as NotifyBody;
      expect(second.entries).toHaveLength(1);
      // The badge is the user's unread as their own `conversations` reports it.
      const bobNow = await ctx.connect(bob);
      expect(second.badge).toBe(await unreadTotal(bobNow));
      expect(second.badge).toBe(6);
      bobNow.close();
      // Never the sender's own copies.
      expect(callsFor(alice.user)).toEqual([]);
    });

    it('a huge-group member: the badge adds the stream side, exact below its bound, past it a lower bound flagged badgeCapped', async () => {
      const ctx = context();
      const bob = ctx.id('bob');
      const alice = await ctx.connect(ctx.id('alice'));
      const group = await ctx.hugeGroup(alice, [bob, ctx.id('carol')]);
      // Plain messages in a huge group do not notify; a 1:1 message does, and its badge counts them.
      await sendToGroup(alice, group, 3);
      await send(alice, bob, 'one');
      await until('the first call', () => callsFor(bob).length >= 1);
      const [first] = callsFor(bob) as [NotifyBody];
      expect(first.badge).toBe(1 + 3);
      expect(first).not.toHaveProperty('badgeCapped');

      // More rows above bob's cursor than the badge reads: it counts the newest BADGE_STREAM_ROWS.
      await sendToGroup(alice, group, BADGE_STREAM_ROWS + 5);
      await send(alice, bob, 'two');
      await until('the second call', () => callsFor(bob).length >= 2);
      const second = callsFor(bob)[1] as NotifyBody;
      expect(second).toMatchObject({ badge: 2 + BADGE_STREAM_ROWS, badgeCapped: true });
      // `conversations` counts the group exactly (its bound is 2 000 rows): the badge is below it.
      const bobNow = await ctx.connect(bob);
      expect(await unreadTotal(bobNow)).toBe(2 + 3 + BADGE_STREAM_ROWS + 5);
      bobNow.close();
      expect(callsFor(bob)).toHaveLength(2);
    });

    it('an online user (socket open) gets none; after the socket closes, the next message notifies', async () => {
      const ctx = context();
      const alice = await ctx.connect(ctx.id('alice'));
      const bobSocket = await ctx.connect(ctx.id('bob'));
      const bob = bobSocket.user;
      await sleep(300); // distributed: the gateway's presence reaches the worker
      await send(alice, bob, 'live');
      await until('the live push', () => bobSocket.pushes.length >= 1);
      await sleep(NOTIFY_WINDOW_MS * 2 + 200);
      expect(callsFor(bob)).toEqual([]);
      bobSocket.close();
      await sleep(300);
      await send(alice, bob, 'offline now');
      await until('a call once offline', () => callsFor(bob).length === 1);
      expect((callsFor(bob)[0] as NotifyBody).entries).toHaveLength(1);
    });
  });
}
