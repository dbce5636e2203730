/**
 * Read-fanout behaviour over real sockets, on tiny groups: the tier thresholds are lowered
 * through live settings so that 3 members is "huge". group.push frames and their prevGseq
 * chain, sync's `groups`, membership windows in group.history paging, recall into the stream,
 * read counts with group.readers, and the degraded membership announcements.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, startTestServer, TestClient, waitFor, type TestServer, type WireEntry } from './harness.ts';
import { okRetrying } from './large-groups.support.ts';

type GroupMsg = WireEntry & { gseq: number };

let s: TestServer;
const clients: TestClient[] = [];
let n = 0;

beforeAll(async () => {
  s = await startTestServer();
  await s.settings.update({ tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.stop();
});

/** Connected users with fresh names (TestClient collects their group.push frames). */
async function users(count: number): Promise<TestClient[]> {
  n += 1;
  const made = await Promise.all(Array.from({ length: count }, async (_, i) => TestClient.connect(s.url, `r${n}x${i}`)));
  clients.push(...made);
  return made;
}

async function say(c: TestClient, group: string, text: string): Promise<{ appinfo: string; seq: number }> {
  const a = appinfo();
  const r = await okRetrying<{ seq: number }>(c, 'send', { appinfo: a, to: { group }, type: 'text', body: { text } });
  return { appinfo: a, seq: r.seq };
}

async function history(c: TestClient, group: string, args: Record<string, number>): Promise<{ messages: GroupMsg[]; hasMore: boolean }> {
  return c.ok('group.history', { group, ...args });
}

async function allHistory(c: TestClient, group: string, limit = 1000): Promise<GroupMsg[]> {
  const out: GroupMsg[] = [];
  for (let after = 0; ;) {
    const page = await history(c, group, { afterGseq: after, limit });
    out.push(...page.messages);
    after = page.messages.at(-1)?.gseq ?? after;
    if (!page.hasMore) return out;
  }
}

describe('read-fanout groups over the wire', () => {
  it('one stream copy, group.push frames chained by prevGseq, sync lists the group until acked', async () => {
    const [alice, bob, carol] = await users(3);
    const group = `g${n}`;
    expect(await alice!.ok('group.create', { name: 'h', group, members: [bob!.user, carol!.user] })).toMatchObject({ tier: 'huge' });
    const sent = [await say(alice!, group, 'one'), await say(alice!, group, 'two'), await say(carol!, group, 'three')];
    const pushes = await waitFor(() => (bob!.groupPushes.flatMap((p) => p.messages).length >= 3 ? bob!.groupPushes : undefined));
    let prev = 0;
    for (const p of pushes) {
      expect(p).toMatchObject({ op: 'group.push', group });
      expect(p.prevGseq).toBe(prev);
      for (const m of p.messages) {
        expect(m.gseq).toBeGreaterThan(prev);
        prev = m.gseq;
      }
    }
    expect(pushes.flatMap((p) => p.messages.map((m) => m.appinfo))).toEqual(sent.map((m) => m.appinfo));

    // Bob's inbox holds none of them; sync names the group and where to read from.
    const sync = await bob!.ok<{ entries: WireEntry[]; groups: Array<{ id: string; headGseq: number; cursor: number }> }>('sync', {
      maxSeq: 0,
    });
    expect(sync.entries.filter((e) => e.kind === 'msg')).toEqual([]);
    expect(sync.groups).toEqual([{ id: group, headGseq: prev, cursor: 0 }]);
    const stream = await allHistory(bob!, group);
    expect(stream.map((m) => m.appinfo)).toEqual(sent.map((m) => m.appinfo));
    expect(await bob!.ok('group.ack', { group, gseq: prev })).toEqual(expect.objectContaining({ cursor: prev }));
    expect((await bob!.ok<{ groups: unknown[] }>('sync', { maxSeq: 0 })).groups).toEqual([]);

    // The sender's inbox: its own copy (the send's seq) and the marker of the read-fanout decision.
    const mine = await alice!.syncAll();
    expect(mine.filter((e) => e.kind === 'msg').map((e) => e.seq)).toEqual([sent[0]!.seq, sent[1]!.seq]);
    expect(mine.filter((e) => e.kind === 'tick').map((e) => e.appinfo)).toEqual([`tick:${sent[0]!.appinfo}`, `tick:${sent[1]!.appinfo}`]);
    // A resend is answered with the original seq and stored nowhere again.
    const again = await okRetrying(alice!, 'send', { appinfo: sent[0]!.appinfo, to: { group }, type: 'text', body: { text: 'one' } });
    expect(again).toMatchObject({ duplicate: true, seq: sent[0]!.seq });
    expect((await allHistory(bob!, group)).length).toBe(3);
  });

  it('membership windows: a joiner reads from its join, a removed member up to its removal, a re-join opens a new window', async () => {
    const [alice, bob, carol, dave] = await users(4);
    const group = `g${n}`;
    await alice!.ok('group.create', { name: 'w', group, members: [bob!.user, carol!.user] });
    const before = await say(alice!, group, 'before dave');
    await alice!.ok('group.add', { group, members: [dave!.user] });
    const during = await say(bob!, group, 'with dave');
    await alice!.ok('group.remove', { group, members: [dave!.user] });
    const gap = [await say(alice!, group, 'gap 1'), await say(alice!, group, 'gap 2'), await say(alice!, group, 'gap 3')];
    await alice!.ok('group.add', { group, members: [dave!.user] });
    const after = [await say(carol!, group, 'dave back 1'), await say(carol!, group, 'dave back 2')];

    const visible = [during, ...after].map((m) => m.appinfo);
    // Paging one at a time crosses the invisible stretch without a false hasMore or an empty page.
    const seen: string[] = [];
    for (let pos = 0; ;) {
      const page = await history(dave!, group, { afterGseq: pos, limit: 1 });
      if (page.messages.length === 0) {
        expect(page.hasMore).toBe(false);
        break;
      }
      seen.push(page.messages[0]!.appinfo);
      pos = page.messages[0]!.gseq;
      if (!page.hasMore) break;
    }
    expect(seen).toEqual(visible);
    // Backwards from the newest, also one at a time.
    const back: string[] = [];
    for (let pos = Number.MAX_SAFE_INTEGER; ;) {
      const page = await history(dave!, group, { beforeGseq: pos, limit: 1 });
      if (page.messages.length === 0) break;
      back.push(page.messages[0]!.appinfo);
      pos = page.messages[0]!.gseq;
      if (!page.hasMore) break;
    }
    expect(back).toEqual([...visible].reverse());
    expect((await allHistory(alice!, group)).map((m) => m.appinfo)).toEqual([before, during, ...gap, ...after].map((m) => m.appinfo));
    // Pushes reached dave only inside his windows.
    await waitFor(() => dave!.groupPushes.flatMap((p) => p.messages).length >= 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(dave!.groupPushes.flatMap((p) => p.messages.map((m) => m.appinfo))).toEqual(visible);
    // Sync points dave past what he may not read: his cursor starts where his first window does;
    // acked past that window, it jumps to his second one.
    const gseqOf = new Map((await allHistory(alice!, group)).map((m) => [m.appinfo, m.gseq]));
    const news = async () => (await dave!.ok<{ groups: Array<{ id: string; cursor: number }> }>('sync', { maxSeq: 0 })).groups;
    expect(await news()).toEqual([expect.objectContaining({ id: group, cursor: gseqOf.get(before.appinfo) })]);
    await dave!.ok('group.ack', { group, gseq: gseqOf.get(during.appinfo)! });
    expect(await news()).toEqual([expect.objectContaining({ id: group, cursor: gseqOf.get(gap[2]!.appinfo) })]);
  });

  it("recall puts a recall entry into the stream (sender, or the admin for anyone's message)", async () => {
    const [alice, bob, carol] = await users(3);
    const group = `g${n}`;
    await alice!.ok('group.create', { name: 'r', group, members: [bob!.user, carol!.user] });
    const own = await say(alice!, group, 'oops');
    const bobs = await say(bob!, group, 'not ok');
    expect(await carol!.call('recall', { appinfo: bobs.appinfo })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    await alice!.ok('recall', { appinfo: own.appinfo });
    await alice!.ok('recall', { appinfo: bobs.appinfo, from: bob!.user }); // admin: not in her inbox, found in her group's stream
    const stream = await allHistory(carol!, group);
    const recalls = stream.filter((m) => m.kind === 'recall').map((m) => m.recall?.appinfo);
    expect(recalls).toEqual([own.appinfo, bobs.appinfo]);
    await waitFor(() => carol!.groupPushes.some((p) => p.messages.some((m) => m.kind === 'recall' && m.recall?.appinfo === bobs.appinfo)));
    // Recalling twice stores one recall entry.
    await alice!.ok('recall', { appinfo: own.appinfo });
    expect((await allHistory(carol!, group)).filter((m) => m.kind === 'recall')).toHaveLength(2);
  });

  it('read counts: group.ack moves a cursor, group.readers lists who read (sender or admin only)', async () => {
    const [alice, bob, carol, dave, erin] = await users(5);
    const group = `g${n}`;
    await alice!.ok('group.create', { name: 'rc', group, members: [bob!.user, carol!.user, dave!.user] });
    const m1 = await say(alice!, group, 'read me');
    const [first] = (await allHistory(bob!, group)).filter((m) => m.appinfo === m1.appinfo);
    await alice!.ok('group.add', { group, members: [erin!.user] }); // joined after m1: not counted
    const m2 = await say(carol!, group, 'later');
    const latest = (await allHistory(bob!, group)).at(-1)!.gseq;
    await bob!.ok('group.ack', { group, gseq: latest });
    await dave!.ok('group.ack', { group, gseq: first!.gseq });
    await erin!.ok('group.ack', { group, gseq: latest });
    const r = await alice!.ok('group.readers', { group, gseq: first!.gseq });
    expect(r).toMatchObject({ gseq: first!.gseq, readCount: 2, unreadCount: 1, readers: [bob!.user, dave!.user].sort(), hasMore: false });
    const paged = await alice!.ok<{ readers: string[]; hasMore: boolean }>('group.readers', { group, gseq: first!.gseq, limit: 1 });
    expect(paged).toMatchObject({ readers: [[bob!.user, dave!.user].sort()[0]], hasMore: true });
    expect(await bob!.call('group.readers', { group, gseq: first!.gseq })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    const second = (await allHistory(carol!, group)).find((m) => m.appinfo === m2.appinfo)!;
    expect(await carol!.ok('group.readers', { group, gseq: second.gseq })).toMatchObject({ readCount: 2, unreadCount: 2 });
    expect(await alice!.call('group.readers', { group, gseq: 999_999 })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it("degradation: a huge group's membership changes reach only the members concerned", async () => {
    const [alice, bob, carol, frank] = await users(4);
    const group = `g${n}`;
    await alice!.ok('group.create', { name: 'd', group, members: [bob!.user, carol!.user] });
    await alice!.ok('group.add', { group, members: [frank!.user] });
    await alice!.ok('group.remove', { group, members: [carol!.user] });
    await waitFor(async () => (await frank!.syncAll()).some((e) => e.type === 'group.add'));
    await waitFor(async () => (await carol!.syncAll()).some((e) => e.type === 'group.remove'));
    await new Promise((r) => setTimeout(r, 100));
    const bobsGroupEntries = (await bob!.syncAll()).filter((e) => e.kind === 'group').map((e) => e.type);
    expect(bobsGroupEntries).toEqual(['group.create']);
    expect((await frank!.syncAll()).find((e) => e.type === 'group.add')?.body).toMatchObject({ event: 'add', count: 1 });
    expect(await bob!.ok('group.info', { group })).toMatchObject({ memberCount: 3, tier: 'huge', fanout: 'read' });
  });
});
