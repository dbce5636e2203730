/**
 * Read-fanout groups in the conversation list (issue #26 item 3), written once and run against
 * the embedded server (tiers lowered live: 3 members is huge) and the distributed stack (2 000
 * offline members make a group huge at the default tiers). Each scenario checks the list, the
 * group cursor, the mention copies and the membership windows over real sockets.
 */
import { describe, expect, it } from 'vitest';
import { appinfo, waitFor, type TestClient, type WireEntry } from './harness.ts';

export interface GroupConversationContext {
  connect(user: string): Promise<TestClient>;
  user(prefix: string): string;
  /** Creates a group that is huge (read-fanout) with `owner` as admin and `members`; returns its id. */
  hugeGroup(owner: TestClient, members: string[]): Promise<string>;
}

type Entry = WireEntry & { mentions?: string[]; gseq?: number; edit?: { body: unknown } };
export interface GroupConv {
  conv: { type: 'user' | 'group'; id: string };
  lastSeq: number;
  last: Entry | null;
  readSeq: number;
  unread: number;
  mentions: number;
  lastGseq?: number;
  readGseq?: number;
  unreadCapped?: true;
  messages?: Entry[];
}

export async function groupConv(c: TestClient, group: string, args: Record<string, unknown> = {}): Promise<GroupConv | undefined> {
  const r = await c.ok<{ convs: GroupConv[] }>('conversations', { limit: 500, ...args });
  return r.convs.find((x) => x.conv.type === 'group' && x.conv.id === group);
}

/** The group conversation once it is listed (the create notice reaches inboxes through the queue). */
export function listedGroup(c: TestClient, group: string, args: Record<string, unknown> = {}): Promise<GroupConv> {
  return waitFor(() => groupConv(c, group, args), 60_000, `${c.user} lists ${group}`);
}

export async function say(c: TestClient, group: string, text: string, mentions?: string[]): Promise<{ appinfo: string; seq: number }> {
  const a = appinfo();
  const r = await c.ok<{ seq: number }>('send', {
    appinfo: a,
    to: { group },
    type: 'text',
    body: { text },
    ...(mentions ? { mentions } : {}),
  });
  return { appinfo: a, seq: r.seq };
}

/** gseq of each appinfo in the stream, as the member reads it. */
export async function gseqs(c: TestClient, group: string): Promise<Map<string, number>> {
  const r = await c.ok<{ messages: Entry[] }>('group.history', { group, afterGseq: 0, limit: 1000 });
  return new Map(r.messages.map((m) => [m.appinfo, m.gseq ?? 0]));
}

export function describeGroupConversations(mode: string, setup: () => GroupConversationContext): void {
  describe(`read-fanout groups in the conversation list (${mode})`, () => {
    it('a huge group is listed with lastGseq, readGseq and unread; group.ack moves readGseq and unread; sync names it', async () => {
      const ctx = setup();
      const [alice, bob, carol] = await Promise.all(['ga', 'gb', 'gc'].map((p) => ctx.connect(ctx.user(p))));
      const group = await ctx.hugeGroup(alice!, [bob!.user, carol!.user]);
      const joined = await listedGroup(bob!, group);
      const sent = [await say(alice!, group, 'one'), await say(alice!, group, 'two'), await say(carol!, group, 'three')];
      const at = await gseqs(bob!, group);
      const top = at.get(sent[2]!.appinfo)!;

      const conv = await waitFor(async () => {
        const c = await groupConv(bob!, group);
        return c?.lastGseq === top ? c : undefined;
      });
      expect(conv).toMatchObject({ lastGseq: top, readGseq: 0, unread: 3, mentions: 0, lastSeq: joined.lastSeq });
      expect(conv.last).toMatchObject({ appinfo: sent[2]!.appinfo, gseq: top, kind: 'msg' });
      expect(conv.unreadCapped).toBeUndefined();
      // The sender's own messages never count; the list keeps its inbox order (lastSeq).
      expect(await groupConv(alice!, group)).toMatchObject({ lastGseq: top, unread: 1 });

      // sync's convs report the group with stream news, in the same terms.
      const sync = await bob!.ok<{ convs: GroupConv[]; groups: Array<{ id: string }> }>('sync', { maxSeq: 0 });
      expect(sync.groups.map((g) => g.id)).toContain(group);
      expect(sync.convs.find((c) => c.conv.id === group)).toMatchObject({ lastGseq: top, readGseq: 0, unread: 3 });

      const second = at.get(sent[1]!.appinfo)!;
      expect(await bob!.ok('group.ack', { group, gseq: second })).toEqual(expect.objectContaining({ cursor: second }));
      expect(await groupConv(bob!, group)).toMatchObject({ readGseq: second, unread: 1 });
      await bob!.ok('group.ack', { group, gseq: top });
      expect(await groupConv(bob!, group)).toMatchObject({ readGseq: top, unread: 0, mentions: 0 });

      // A recall stops counting; an edit shows in `last` (both follow the message into the stream).
      const four = await say(alice!, group, 'four');
      const five = await say(alice!, group, 'five');
      await waitFor(async () => ((await groupConv(bob!, group))?.unread === 2 ? true : undefined));
      await alice!.ok('recall', { appinfo: four.appinfo });
      await alice!.ok('edit', { appinfo: five.appinfo, body: { text: 'five, edited' } });
      const after = await waitFor(async () => {
        const c = await groupConv(bob!, group);
        return c?.unread === 1 && c.last?.edit !== undefined ? c : undefined;
      });
      expect(after.last).toMatchObject({ appinfo: five.appinfo, body: { text: 'five, edited' } });
    }, 120_000);

    it('an @-mention reaches the named member’s inbox (pushed), counts once; @all counts from the stream; group.ack reads both', async () => {
      const ctx = setup();
      const [alice, bob, carol] = await Promise.all(['ma', 'mb', 'mc'].map((p) => ctx.connect(ctx.user(p))));
      const group = await ctx.hugeGroup(alice!, [bob!.user, carol!.user]);
      await listedGroup(bob!, group);
      await listedGroup(carol!, group);
      const named = await say(alice!, group, 'hey bob', [bob!.user]);

      // Bob's inbox gets a copy, pushed like any inbox entry; carol's does not.
      const pushed = await waitFor(
        () => bob!.pushes.flatMap((p) => p.entries).find((e) => e.appinfo === named.appinfo && e.kind === 'msg'),
        60_000,
        'the mention copy pushed to bob',
      );
      expect(pushed).toMatchObject({ conv: { type: 'group', id: group }, from: alice!.user, mentions: [bob!.user] });
      expect((await carol!.syncAll()).filter((e) => e.kind === 'msg')).toEqual([]);

      const bobConv = await waitFor(async () => {
        const c = await groupConv(bob!, group, { lastMessages: 5 });
        return c?.mentions === 1 ? c : undefined;
      });
      expect(bobConv).toMatchObject({ unread: 1, mentions: 1 });
      // One message, shown once: the stream's copy (with its gseq) in `last` and in `messages`.
      expect(bobConv.last).toMatchObject({ appinfo: named.appinfo, gseq: expect.any(Number) });
      expect(bobConv.messages!.filter((m) => m.appinfo === named.appinfo)).toHaveLength(1);
      expect(await groupConv(carol!, group)).toMatchObject({ unread: 1, mentions: 0 });

      const all = await say(alice!, group, 'hey all', ['@all']);
      const c2 = await waitFor(async () => {
        const c = await groupConv(carol!, group);
        return c?.unread === 2 ? c : undefined;
      });
      expect(c2.mentions).toBe(1);
      expect(await groupConv(bob!, group)).toMatchObject({ unread: 2, mentions: 2 });
      expect((await carol!.syncAll()).filter((e) => e.appinfo === all.appinfo)).toEqual([]);

      // Acking the stream past both reads the inbox side too: no mention left anywhere.
      const top = (await groupConv(bob!, group))!.lastGseq!;
      await bob!.ok('group.ack', { group, gseq: top });
      expect(await groupConv(bob!, group)).toMatchObject({ readGseq: top, unread: 0, mentions: 0 });

      // A recall of a mention reaches the copy: the count drops without an ack.
      const again = await say(alice!, group, 'bob again', [bob!.user]);
      await waitFor(async () => ((await groupConv(bob!, group))?.mentions === 1 ? true : undefined));
      await alice!.ok('recall', { appinfo: again.appinfo });
      await waitFor(async () => {
        const c = await groupConv(bob!, group);
        return c?.mentions === 0 && c.unread === 0 ? true : undefined;
      });
    }, 120_000);

    it('membership windows: a member who left counts nothing past the removal', async () => {
      const ctx = setup();
      const [alice, bob, dave] = await Promise.all(['wa', 'wb', 'wd'].map((p) => ctx.connect(ctx.user(p))));
      const group = await ctx.hugeGroup(alice!, [bob!.user, dave!.user]);
      await listedGroup(dave!, group);
      const before = await say(alice!, group, 'before');
      const beforeGseq = (await gseqs(dave!, group)).get(before.appinfo)!;
      await dave!.ok('group.remove', { group, members: [dave!.user] });
      await say(alice!, group, 'after 1');
      await say(alice!, group, 'after 2', ['@all']);
      await waitFor(async () => ((await groupConv(bob!, group))?.unread === 3 ? true : undefined));
      const gone = await groupConv(dave!, group);
      expect(gone).toMatchObject({ lastGseq: beforeGseq, unread: 1, mentions: 0 });
      // Its newest entry is its own removal notice (inbox side), newer than what it may read.
      expect(gone!.last).toMatchObject({ kind: 'group', type: 'group.remove' });
      // Mentioning the member who left is refused, and nothing is stored.
      const head = (await alice!.ok<{ headGseq: number }>('group.info', { group })).headGseq;
      const refused = await alice!.call('send', { appinfo: appinfo(), to: { group }, type: 'text', body: {}, mentions: [dave!.user] });
      expect(refused).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
      expect((await alice!.ok<{ headGseq: number }>('group.info', { group })).headGseq).toBe(head);
    }, 120_000);
  });
}
