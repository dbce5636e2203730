import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, startTestServer, TestClient, waitFor, type TestServer, type WireEntry } from './harness.ts';

let s: TestServer;
const clients: TestClient[] = [];
let n = 0;
/** Fresh user names per test so tests share one server without sharing inboxes. */
async function users(count: number, tenant = 'default'): Promise<TestClient[]> {
  n += 1;
  const made = await Promise.all(Array.from({ length: count }, (_, i) => TestClient.connect(s.url, `u${n}x${i}`, tenant)));
  clients.push(...made);
  return made;
}
const msgs = (entries: WireEntry[]) => entries.filter((e) => e.kind === 'msg');

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.stop();
});

describe('1:1 messaging', () => {
  it('writes one copy into each inbox, with conv naming the other party, and pushes with prevSeq', async () => {
    const [alice, bob] = await users(2);
    const a = appinfo();
    const sent = await alice!.ok<{ seq: number; sendTime: number; duplicate: boolean }>('send', {
      appinfo: a,
      to: { user: bob!.user },
      type: 'text',
      body: { text: 'hi bob' },
    });
    expect(sent.duplicate).toBe(false);
    expect(sent.seq).toBeGreaterThan(0);

    const mine = msgs(await alice!.syncAll());
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      seq: sent.seq,
      appinfo: a,
      conv: { type: 'user', id: bob!.user },
      from: alice!.user,
      body: { text: 'hi bob' },
    });

    const theirs = await waitFor(async () => {
      const m = msgs(await bob!.syncAll());
      return m.length ? m : undefined;
    });
    expect(theirs).toHaveLength(1);
    expect(theirs[0]).toMatchObject({ appinfo: a, conv: { type: 'user', id: alice!.user }, from: alice!.user, sendTime: sent.sendTime });

    // Push path: bob's push for that entry names the seq before it in bob's inbox.
    const push = await waitFor(() => bob!.pushes.find((p) => p.entries.some((e) => e.appinfo === a)));
    const inbox = await bob!.syncAll();
    const idx = inbox.findIndex((e) => e.appinfo === a);
    expect(push.prevSeq).toBe(idx === 0 ? 0 : inbox[idx - 1]!.seq);
  });

  it('syncs from 0 and from the middle, paging without skip or repeat', async () => {
    const [alice, bob] = await users(2);
    for (let i = 0; i < 25; i++) {
      await alice!.ok('send', { appinfo: appinfo(), to: { user: bob!.user }, type: 'text', body: { i } });
    }
    const all = await waitFor(async () => {
      const m = await bob!.syncAll(0, 7);
      return m.length >= 25 ? m : undefined;
    });
    expect(all.map((e) => (e.body as { i: number }).i)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    const seqs = all.map((e) => e.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    const middle = seqs[9]!;
    const rest = await bob!.syncAll(middle, 4);
    expect(rest.map((e) => e.seq)).toEqual(seqs.slice(10));
    const first = await bob!.ok<{ entries: WireEntry[]; hasMore: boolean; headSeq: number }>('sync', { maxSeq: 0, limit: 10 });
    expect(first.hasMore).toBe(true);
    expect(first.entries).toHaveLength(10);
    expect(first.headSeq).toBe(seqs.at(-1));
  });

  it('a resend with the same appinfo answers duplicate with the original seq and stores one copy', async () => {
    const [alice, bob] = await users(2);
    const a = appinfo();
    const args = { appinfo: a, to: { user: bob!.user }, type: 'text', body: { text: 'once' } };
    const first = await alice!.ok<{ seq: number; duplicate: boolean; sendTime: number }>('send', args);
    const again = await Promise.all([
      alice!.ok<{ seq: number; duplicate: boolean; sendTime: number }>('send', args),
      alice!.ok<{ seq: number; duplicate: boolean }>('send', args),
    ]);
    for (const r of again) expect(r).toMatchObject({ seq: first.seq, duplicate: true });
    expect(again[0].sendTime).toBe(first.sendTime);
    await waitFor(async () => msgs(await bob!.syncAll()).length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(msgs(await alice!.syncAll()).filter((e) => e.appinfo === a)).toHaveLength(1);
    expect(msgs(await bob!.syncAll()).filter((e) => e.appinfo === a)).toHaveLength(1);
  });

  it('read writes a read entry for the reader and a receipt with readBy for the sender', async () => {
    const [alice, bob] = await users(2);
    const a = appinfo();
    const sent = await alice!.ok<{ seq: number }>('send', { appinfo: a, to: { user: bob!.user }, type: 'text', body: {} });
    const copy = await waitFor(async () => msgs(await bob!.syncAll())[0]);
    const r = await bob!.ok<{ seq: number }>('read', { seqs: [copy.seq] });
    const readEntry = (await bob!.syncAll()).find((e) => e.seq === r.seq);
    expect(readEntry).toMatchObject({ kind: 'read', referSeq: copy.seq, from: bob!.user });
    const receipt = await waitFor(async () => (await alice!.syncAll()).find((e) => e.kind === 'receipt'));
    expect(receipt).toMatchObject({ referSeq: sent.seq, readBy: [bob!.user] });
  });
});

describe('groups', () => {
  it('a 5-member group: every member holds exactly one copy', async () => {
    const members = await users(5);
    const [owner] = members;
    const g = await owner!.ok<{ group: string; tier: string }>('group.create', { name: 'five', members: members.map((m) => m.user) });
    expect(g.tier).toBe('small');
    const a = appinfo();
    await owner!.ok('send', { appinfo: a, to: { group: g.group }, type: 'text', body: { t: 1 } });
    for (const m of members) {
      const got = await waitFor(async () => {
        const e = msgs(await m.syncAll());
        return e.length ? e : undefined;
      });
      expect(got.filter((e) => e.appinfo === a)).toHaveLength(1);
      expect(got[0]!.conv).toEqual({ type: 'group', id: g.group });
    }
    const info = await members[3]!.ok<{ memberCount: number; tier: string; fanout: string }>('group.info', { group: g.group });
    expect(info).toMatchObject({ memberCount: 5, tier: 'small', fanout: 'write' });
  });

  it('a resend reaches who were members when it was first sent: not a later joiner, still one copy each', async () => {
    const [alice, bob, carol] = await users(3);
    const g = await alice!.ok<{ group: string }>('group.create', { name: 'resend', members: [bob!.user] });
    const args = { appinfo: appinfo(), to: { group: g.group }, type: 'text', body: { t: 'once' } };
    const first = await alice!.ok<{ seq: number }>('send', args);
    await waitFor(async () => msgs(await bob!.syncAll()).some((e) => e.appinfo === args.appinfo));
    s.clock.offset += 1000; // carol joins strictly after the send time
    await alice!.ok('group.add', { group: g.group, members: [carol!.user] });
    expect(await alice!.ok('send', args)).toMatchObject({ seq: first.seq, duplicate: true });
    // The resend's fanout ran (a later message overtakes nothing): bob still has one copy, carol none.
    const later = appinfo();
    await alice!.ok('send', { ...args, appinfo: later });
    await waitFor(async () => msgs(await carol!.syncAll()).some((e) => e.appinfo === later));
    expect(msgs(await bob!.syncAll()).filter((e) => e.appinfo === args.appinfo)).toHaveLength(1);
    expect(msgs(await carol!.syncAll()).filter((e) => e.appinfo === args.appinfo)).toHaveLength(0);
  });

  it('20 members reading one message at the same moment end with one readBy holding all 20', async () => {
    const members = await users(21);
    const [sender, ...readers] = members;
    const g = await sender!.ok<{ group: string }>('group.create', { name: 'readers', members: members.map((m) => m.user) });
    const a = appinfo();
    const sent = await sender!.ok<{ seq: number }>('send', { appinfo: a, to: { group: g.group }, type: 'text', body: {} });
    const copies = await Promise.all(readers.map((m) => waitFor(async () => msgs(await m.syncAll()).find((e) => e.appinfo === a))));
    await Promise.all(readers.map((m, i) => m.ok('read', { seqs: [copies[i]!.seq] })));
    const all = readers.map((m) => m.user).sort();
    const last = await waitFor(async () => {
      const receipts = (await sender!.syncAll()).filter((e) => e.kind === 'receipt' && e.referSeq === sent.seq);
      const top = receipts.at(-1);
      return top && top.readBy?.length === 20 ? top : undefined;
    });
    expect(last.readBy).toEqual(all);
  });

  it('a non-member sending to a group gets FORBIDDEN; an unknown group NOT_FOUND', async () => {
    const [owner, member, outsider] = await users(3);
    const g = await owner!.ok<{ group: string }>('group.create', { name: 'closed', members: [member!.user] });
    const r = await outsider!.call('send', { appinfo: appinfo(), to: { group: g.group }, type: 'text', body: {} });
    expect(r).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    const r2 = await outsider!.call('send', { appinfo: appinfo(), to: { group: 'no-such-group' }, type: 'text', body: {} });
    expect(r2).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    const r3 = await outsider!.call('group.info', { group: g.group });
    expect(r3).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
  });

  it('a member added later does not receive earlier messages; a removed one receives nothing after removal', async () => {
    const [owner, early, late] = await users(3);
    const g = await owner!.ok<{ group: string }>('group.create', { name: 'windows', members: [early!.user] });
    const before = appinfo();
    await owner!.ok('send', { appinfo: before, to: { group: g.group }, type: 'text', body: { n: 'before' } });
    await owner!.ok('group.add', { group: g.group, members: [late!.user] });
    const during = appinfo();
    await owner!.ok('send', { appinfo: during, to: { group: g.group }, type: 'text', body: { n: 'during' } });
    await owner!.ok('group.remove', { group: g.group, members: [early!.user] });
    const after = appinfo();
    await owner!.ok('send', { appinfo: after, to: { group: g.group }, type: 'text', body: { n: 'after' } });

    await waitFor(async () => msgs(await late!.syncAll()).some((e) => e.appinfo === after));
    await waitFor(async () => (await early!.syncAll()).some((e) => e.kind === 'group' && e.type === 'group.remove'));
    await new Promise((r) => setTimeout(r, 200));
    expect(msgs(await late!.syncAll()).map((e) => e.appinfo)).toEqual([during, after]);
    expect(msgs(await early!.syncAll()).map((e) => e.appinfo)).toEqual([before, during]);
    const r = await early!.call('send', { appinfo: appinfo(), to: { group: g.group }, type: 'text', body: {} });
    expect(r).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
  });
});

describe('recall', () => {
  it('inside 24 h writes recall entries into every copy inbox; by a non-sender FORBIDDEN; after 24 h RECALL_EXPIRED', async () => {
    const members = await users(3);
    const [sender, m1, m2] = members;
    const g = await sender!.ok<{ group: string }>('group.create', { name: 'recall', members: [m1!.user, m2!.user] });
    const a = appinfo();
    const sent = await sender!.ok<{ sendTime: number }>('send', { appinfo: a, to: { group: g.group }, type: 'text', body: {} });
    await waitFor(async () => msgs(await m2!.syncAll()).length === 1);

    // A recall names the message by sender and appinfo (the caller's own unless `from` says).
    expect(await m1!.call('recall', { appinfo: a })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    const forbidden = await m1!.call('recall', { appinfo: a, from: sender!.user });
    expect(forbidden).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });

    const r = await sender!.ok<{ seq: number }>('recall', { appinfo: a });
    for (const m of members) {
      const rec = await waitFor(async () => (await m.syncAll()).find((e) => e.kind === 'recall'));
      expect(rec.recall).toEqual({ appinfo: a, sendTime: sent.sendTime, from: sender!.user });
    }
    expect((await sender!.syncAll()).find((e) => e.seq === r.seq)?.kind).toBe('recall');

    const old = appinfo();
    const [, bob] = [sender, m1];
    await sender!.ok('send', { appinfo: old, to: { user: bob!.user }, type: 'text', body: {} });
    s.clock.offset = 24 * 3600 * 1000 + 1000;
    try {
      const late = await sender!.call('recall', { appinfo: old });
      expect(late).toMatchObject({ ok: false, error: { code: 'RECALL_EXPIRED' } });
    } finally {
      s.clock.offset = 0;
    }
    const missing = await sender!.call('recall', { appinfo: 'never-sent' });
    expect(missing).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });
});

describe('isolation', () => {
  it('one tenant cannot see or message into another tenant', async () => {
    const [a1] = await users(1, 'acme');
    const [b1] = await users(1, 'globex');
    // Same user id in another tenant is a different inbox.
    const twin = await TestClient.connect(s.url, a1!.user, 'globex');
    clients.push(twin);
    await a1!.ok('send', { appinfo: appinfo(), to: { user: a1!.user }, type: 'text', body: { note: 'to self' } });
    await b1!.ok('send', { appinfo: appinfo(), to: { user: a1!.user }, type: 'text', body: { x: 1 } });
    await waitFor(async () => msgs(await twin.syncAll()).length === 1);
    expect(msgs(await a1!.syncAll()).map((e) => e.body)).toEqual([{ note: 'to self' }]);
  });
});
