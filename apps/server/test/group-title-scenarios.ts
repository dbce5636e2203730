/**
 * Conversation titles and group.rename, written once and run against the embedded server (tiers
 * lowered live) and the distributed stack (2 000 offline members make a group huge at the
 * default tiers): every member's `conversations`, sync `convs` and push `convs` carry the group's
 * name, a rename by the admin reaches every member (a huge group's too, offline members and
 * members added later included), and every refused rename stores nothing in any inbox.
 */
import { describe, expect, it } from 'vitest';
import { appinfo, waitFor, type Push, type TestClient, type WireEntry } from './harness.ts';

export interface GroupTitleContext {
  connect(user: string): Promise<TestClient>;
  user(prefix: string): string;
  /** A huge (read-fanout) group named "huge", `owner` its admin, with `members` and offline fillers. */
  hugeGroup(owner: TestClient, members: string[]): Promise<{ group: string; offlineMember: string }>;
}

interface TitledConv {
  conv: { type: 'user' | 'group'; id: string };
  title?: string;
  lastSeq: number;
  asOfSeq: number;
  unread: number;
}
type PushWithConvs = Push & { convs?: TitledConv[] };
interface SyncReply {
  entries: WireEntry[];
  convs: TitledConv[];
}

const find = (convs: readonly TitledConv[] | undefined, type: 'user' | 'group', id: string) =>
  convs?.find((c) => c.conv.type === type && c.conv.id === id);

async function listed(c: TestClient, type: 'user' | 'group', id: string): Promise<TitledConv | undefined> {
  const r = await c.ok<{ convs: TitledConv[] }>('conversations', { limit: 500 });
  return find(r.convs, type, id);
}

/** The member's group conversation once its title is `title` (notices arrive through the queue). */
export function titled(c: TestClient, group: string, title: string): Promise<TitledConv> {
  return waitFor(
    async () => {
      const conv = await listed(c, 'group', group);
      return conv?.title === title ? conv : undefined;
    },
    60_000,
    `${c.user} sees ${group} as ${JSON.stringify(title)}`,
  );
}

const renameNotices = (entries: readonly WireEntry[], group: string) =>
  entries.filter((e) => e.kind === 'group' && e.type === 'group.rename' && e.conv.id === group);

/**
 * The states a client has for `group` after the push of `notice`: the push's own convs, or,
 * when the push came without them (the server's read was slow), the sync the protocol says to
 * make instead. Returns which of the two it was.
 */
async function stateAfterPush(c: TestClient, group: string, notice: string): Promise<{ conv: TitledConv | undefined; fromPush: boolean }> {
  const push = await waitFor<PushWithConvs>(
    () => c.pushes.find((p) => p.entries.some((e) => e.appinfo === notice)),
    60_000,
    `${c.user}'s push of ${notice}`,
  );
  if (push.convs !== undefined) return { conv: find(push.convs, 'group', group), fromPush: true };
  const r = await c.ok<SyncReply>('sync', { maxSeq: push.prevSeq, limit: push.entries.length });
  return { conv: find(r.convs, 'group', group), fromPush: false };
}

export function describeGroupTitles(mode: string, setup: () => GroupTitleContext): void {
  describe(`conversation titles and group.rename (${mode})`, () => {
    it("every member's conversations, sync convs and push convs carry the group's name; a rename by the admin reaches them all; 1:1 chats carry none", async () => {
      const ctx = setup();
      const [alice, bob, carol] = await Promise.all(['ta', 'tb', 'tc'].map((p) => ctx.connect(ctx.user(p))));
      const members = [alice!, bob!, carol!];
      const { group, tier } = await alice!.ok<{ group: string; tier: string }>('group.create', {
        name: 'team',
        members: [bob!.user, carol!.user],
      });
      expect(tier).not.toBe('huge');
      for (const m of members) await titled(m, group, 'team');

      // sync from scratch names the group with its title (distributed: once the index has caught up, see convsPending).
      const synced = await waitFor(
        async () => find((await bob!.ok<SyncReply>('sync', { maxSeq: 0, limit: 1000 })).convs, 'group', group),
        30_000,
        'the group in sync convs',
      );
      expect(synced).toMatchObject({ title: 'team' });

      // A 1:1 chat has no title: the client shows the peer.
      await alice!.ok('send', { appinfo: appinfo(), to: { user: bob!.user }, type: 'text', body: { text: 'hi' } });
      const direct = await waitFor(() => listed(bob!, 'user', alice!.user), 30_000, 'the 1:1 chat');
      expect(direct).not.toHaveProperty('title');

      expect(await alice!.ok('group.rename', { group, name: 'crew' })).toMatchObject({ group, name: 'crew' });
      expect(await bob!.ok('group.info', { group })).toMatchObject({ name: 'crew' });
      let fromPush = 0;
      for (const m of members) {
        const conv = await titled(m, group, 'crew');
        expect(conv.unread).toBe(0); // a notice is never unread
        const notice = renameNotices(await m.syncAll(), group);
        expect(notice).toHaveLength(1);
        expect(notice[0]!.body).toMatchObject({ event: 'rename', group, actor: alice!.user, name: 'crew', nameRev: 1 });
        const after = await stateAfterPush(m, group, notice[0]!.appinfo);
        expect(after.conv, `${m.user}'s state after the rename push`).toMatchObject({ title: 'crew' });
        if (after.fromPush) fromPush++;
      }
      // The server reads push convs within a bound and may send a frame without them: at least one carried them.
      expect(fromPush).toBeGreaterThan(0);

      // A member added after the rename learns the name from its add notice.
      const dave = await ctx.connect(ctx.user('td'));
      await alice!.ok('group.add', { group, members: [dave.user] });
      await titled(dave, group, 'crew');
    }, 120_000);

    it('refused renames are typed errors and store nothing in any inbox: non-admin, outsider, unknown group, bad names, malformed frames', async () => {
      const ctx = setup();
      const [alice, bob, eve] = await Promise.all(['ra', 'rb', 're'].map((p) => ctx.connect(ctx.user(p))));
      const { group } = await alice!.ok<{ group: string }>('group.create', { name: 'team', members: [bob!.user] });
      await titled(bob!, group, 'team');
      const refused: Array<[TestClient, Record<string, unknown>, string]> = [
        [bob!, { group, name: 'mine now' }, 'FORBIDDEN'],
        [eve!, { group, name: 'mine now' }, 'FORBIDDEN'],
        [alice!, { group: `${group}x`, name: 'nowhere' }, 'NOT_FOUND'],
        [eve!, { group: `${group}x`, name: 'nowhere' }, 'NOT_FOUND'],
        [alice!, { group, name: '' }, 'BAD_REQUEST'],
        [alice!, { group, name: 'n'.repeat(129) }, 'BAD_REQUEST'],
        [alice!, { group, name: 42 }, 'BAD_REQUEST'],
        [alice!, { group, name: null }, 'BAD_REQUEST'],
        [alice!, { group }, 'BAD_REQUEST'],
        [alice!, { name: 'no group' }, 'BAD_REQUEST'],
        [alice!, { group: 'not:an id', name: 'x' }, 'BAD_REQUEST'],
        [alice!, { group: [group], name: 'x' }, 'BAD_REQUEST'],
      ];
      for (const [who, args, code] of refused) {
        expect(await who.call('group.rename', args), `${who.user} ${JSON.stringify(args).slice(0, 80)}`).toMatchObject({
          ok: false,
          error: { code },
        });
      }
      // The longest name create accepts is accepted here too.
      const longest = 'n'.repeat(128);
      expect(await alice!.ok('group.rename', { group, name: longest })).toMatchObject({ name: longest });
      // A replay is no second rename: the same name answers as before and stores nothing new.
      expect(await alice!.ok('group.rename', { group, name: longest })).toMatchObject({ name: longest });
      // The last rename is the barrier: once it is in, nothing refused or replayed came before it.
      await alice!.ok('group.rename', { group, name: 'final' });
      for (const m of [alice!, bob!]) {
        await titled(m, group, 'final');
        const names = renameNotices(await m.syncAll(), group).map((e) => (e.body as { name: string; nameRev: number }).nameRev);
        expect(names.sort(), `${m.user}'s rename notices`).toEqual([1, 2]);
      }
      expect(await eve!.syncAll()).toEqual([]);
      expect(await alice!.ok('group.info', { group })).toMatchObject({ name: 'final' });
    }, 120_000);

    it('an admin who left renames nothing (FORBIDDEN); former members keep the name they last had', async () => {
      const ctx = setup();
      const [alice, bob, carol] = await Promise.all(['la', 'lb', 'lc'].map((p) => ctx.connect(ctx.user(p))));
      const { group } = await alice!.ok<{ group: string }>('group.create', { name: 'club', members: [bob!.user, carol!.user] });
      await titled(carol!, group, 'club');
      await alice!.ok('group.remove', { group, members: [carol!.user] });
      await alice!.ok('group.rename', { group, name: 'club 2' });
      await titled(bob!, group, 'club 2');
      // carol left before the rename: her list keeps the name she had, and group.info is refused.
      expect(await listed(carol!, 'group', group)).toMatchObject({ title: 'club' });
      expect(await carol!.call('group.info', { group })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      await alice!.ok('group.remove', { group, members: [alice!.user] });
      expect(await alice!.call('group.rename', { group, name: 'ghost' })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      expect(await bob!.ok('group.info', { group })).toMatchObject({ name: 'club 2' });
    }, 120_000);

    it('a huge (read-fanout) group: the rename reaches every member, offline ones and ones added later included', async () => {
      const ctx = setup();
      const [alice, bob, eve] = await Promise.all(['ha', 'hb', 'he'].map((p) => ctx.connect(ctx.user(p))));
      const { group, offlineMember } = await ctx.hugeGroup(alice!, [bob!.user, eve!.user]);
      expect(await alice!.ok('group.info', { group })).toMatchObject({ fanout: 'read' });
      await titled(bob!, group, 'huge');
      await alice!.ok('group.remove', { group, members: [eve!.user] });
      await titled(eve!, group, 'huge');
      await alice!.ok('group.rename', { group, name: 'town hall' });
      await titled(bob!, group, 'town hall');
      await titled(alice!, group, 'town hall');
      // A member who was never connected: the notice went to its inbox too.
      await titled(await ctx.connect(offlineMember), group, 'town hall');
      // Added after the rename (in a huge group only the added member is told): its notice carries the name.
      const dave = await ctx.connect(ctx.user('hd'));
      await alice!.ok('group.add', { group, members: [dave.user] });
      await titled(dave, group, 'town hall');
      // Removed before it: eve keeps the name she last had.
      expect(await listed(eve!, 'group', group)).toMatchObject({ title: 'huge' });
      // The rename is no stream message.
      const stream = await bob!.ok<{ messages: WireEntry[] }>('group.history', { group, afterGseq: 0 });
      expect(stream.messages.filter((m) => m.kind !== 'msg')).toEqual([]);
    }, 120_000);
  });
}
