/**
 * Attacks on appinfo ownership and on rights checked when used (docs/security.md, classes
 * 1–3 and 4b), as one scenario set run against the embedded server and the distributed
 * stack. Every attack must get a typed error and leave every inbox as it was.
 */
import { recallAppinfo } from '@seqline/core';
import { describe, expect, it } from 'vitest';
import { appinfo, waitFor, type TestClient, type WireEntry } from '../harness.ts';

export interface Stack {
  connect(user: string): Promise<TestClient>;
  /** A user id no other test of this run uses. */
  user(prefix: string): string;
}

const msgs = (entries: WireEntry[]) => entries.filter((e) => e.kind === 'msg');
const text = (body: string) => ({ type: 'text', body: { text: body } });

/** Waits until the inbox holds `appinfo` (as kind `kind`), then returns the whole inbox. */
async function inboxWith(c: TestClient, a: string, kind = 'msg'): Promise<WireEntry[]> {
  return waitFor(
    async () => {
      const all = await c.syncAll();
      return all.some((e) => e.appinfo === a && e.kind === kind) ? all : undefined;
    },
    15_000,
    `${c.user} to hold ${kind} ${a}`,
  );
}

/** Lets asynchronous delivery settle, then syncs: what would have arrived has arrived. */
async function settledInbox(c: TestClient, probe: TestClient, probeTo: string): Promise<WireEntry[]> {
  // A marker sent after the attack, on the same path, lands after anything the attack queued.
  const marker = appinfo();
  await probe.ok('send', { appinfo: marker, to: { user: probeTo }, ...text('marker') });
  await inboxWith(c, marker);
  return c.syncAll();
}

export function describeAppinfoAttacks(mode: string, stack: () => Stack): void {
  describe(`appinfo ownership and rights when used (${mode})`, () => {
    it("class 1: replaying a received appinfo sends only a message of the replayer's own; the original is never redelivered", async () => {
      const s = stack();
      const [a, m, b] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('mallory')), s.connect(s.user('bob'))]);
      const x = appinfo();
      await a.ok('send', { appinfo: x, to: { user: m.user }, ...text('for mallory only') });
      await inboxWith(m, x);
      // An appinfo is unique per sender: mallory's x is a new message of hers, not alice's resent.
      const replay = await m.ok<{ duplicate: boolean; body?: unknown }>('send', {
        appinfo: x,
        to: { user: b.user },
        ...text('from mallory'),
      });
      expect(replay.duplicate).toBe(false);
      expect(replay.body).toBeUndefined(); // stored as she sent it: alice's body is not handed back
      // Reusing it for another destination is her own appinfo reused: refused.
      const g = await m.ok<{ group: string }>('group.create', { name: 'g', members: [b.user] });
      const intoGroup = await m.call('send', { appinfo: x, to: { group: g.group }, ...text('ignored') });
      expect(intoGroup).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      // Bob holds mallory's x only, from mallory; nothing of alice's but the marker.
      const bobs = await settledInbox(b, a, b.user);
      expect(bobs.filter((e) => e.appinfo === x).map((e) => [e.from, e.body])).toEqual([[m.user, { text: 'from mallory' }]]);
      expect(
        msgs(bobs)
          .filter((e) => e.from === a.user)
          .map((e) => e.body),
      ).toEqual([{ text: 'marker' }]);
      expect((await m.syncAll()).filter((e) => e.appinfo === x).map((e) => e.from)).toEqual([a.user, m.user]);
    });

    it('class 1: a sender reusing its own appinfo for another destination is refused; a true resend is a duplicate', async () => {
      const s = stack();
      const [a, b, c] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob')), s.connect(s.user('carol'))]);
      const x = appinfo();
      const first = await a.ok<{ seq: number; duplicate: boolean }>('send', { appinfo: x, to: { user: b.user }, ...text('to bob') });
      expect(first.duplicate).toBe(false);
      expect(await a.call('send', { appinfo: x, to: { user: c.user }, ...text('to carol') })).toMatchObject({
        ok: false,
        error: { code: 'FORBIDDEN' },
      });
      const again = await a.ok<{ seq: number; duplicate: boolean }>('send', { appinfo: x, to: { user: b.user }, ...text('to bob') });
      expect(again).toMatchObject({ seq: first.seq, duplicate: true });
      expect((await inboxWith(b, x)).filter((e) => e.appinfo === x)).toHaveLength(1);
      expect((await settledInbox(c, b, c.user)).filter((e) => e.appinfo === x)).toEqual([]);
    });

    it('class 2: a client appinfo shaped like a server id is refused up front; no op makes a non-msg entry from client input', async () => {
      const s = stack();
      const [m, b] = await Promise.all([s.connect(s.user('mallory')), s.connect(s.user('bob'))]);
      const g = await m.ok<{ group: string }>('group.create', { name: 'g', members: [b.user] });
      const forged = [`group:${g.group}:create`, `recall:${appinfo()}`, 'receipt:1:1', `tick:${appinfo()}`, `read:${appinfo()}`, 'a:b'];
      for (const a of forged) {
        expect(await m.call('send', { appinfo: a, to: { user: b.user }, ...text('forged') }), a).toMatchObject({
          ok: false,
          error: { code: 'BAD_REQUEST' },
        });
        expect(await m.call('send', { appinfo: a, to: { group: g.group }, ...text('forged') }), a).toMatchObject({
          ok: false,
          error: { code: 'BAD_REQUEST' },
        });
      }
      const bobs = await settledInbox(b, m, b.user);
      // Bob holds the one real create entry and mallory's marker: nothing forged.
      expect(bobs.filter((e) => e.kind === 'group').map((e) => e.from)).toEqual([m.user]);
      expect(msgs(bobs).map((e) => e.body)).toEqual([{ text: 'marker' }]);
      // A chosen group id may not take the form of the ids the server makes.
      expect(await m.call('group.create', { name: 'g', members: [], group: '0192f0c1-7a1b-7cc3-9e55-5f0d6a1b2c3d' })).toMatchObject({
        ok: false,
        error: { code: 'BAD_REQUEST' },
      });
    });

    it('class 3: decoys cannot suppress a recall, a group announcement or a receipt', async () => {
      const s = stack();
      const [a, b] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob'))]);
      const x = appinfo();
      const gid = s.user('grp');
      // Bob plants decoys for the ids the server will make next: every one is refused.
      const sent = await a.ok<{ seq: number }>('send', { appinfo: x, to: { user: b.user }, ...text('hello') });
      for (const decoy of [recallAppinfo({ sender: a.user, appinfo: x }), `recall:${x}`, `group:${gid}:create`, `receipt:${sent.seq}:1`]) {
        expect(await b.call('send', { appinfo: decoy, to: { user: a.user }, ...text('decoy') })).toMatchObject({
          ok: false,
          error: { code: 'BAD_REQUEST' },
        });
      }
      // The real entries all arrive.
      const copy = (await inboxWith(b, x)).find((e) => e.appinfo === x);
      await b.ok('read', { seqs: [copy?.seq] });
      expect((await inboxWith(a, `receipt:${sent.seq}:1`, 'receipt')).some((e) => e.kind === 'receipt' && e.referSeq === sent.seq)).toBe(
        true,
      );
      await a.ok('recall', { appinfo: x });
      expect(
        (await inboxWith(b, recallAppinfo({ sender: a.user, appinfo: x }), 'recall')).some(
          (e) => e.kind === 'recall' && e.recall?.appinfo === x,
        ),
      ).toBe(true);
      await a.ok('group.create', { name: 'g', members: [b.user], group: gid });
      await inboxWith(b, `group:${gid}:create`, 'group');
    });

    it('class 4: an admin who left the group recalls and removes nothing; while a member they could', async () => {
      const s = stack();
      const [admin, b, c] = await Promise.all([s.connect(s.user('admin')), s.connect(s.user('bob')), s.connect(s.user('carol'))]);
      const { group } = await admin.ok<{ group: string }>('group.create', { name: 'g', members: [b.user, c.user] });
      const y = appinfo();
      const z = appinfo();
      await b.ok('send', { appinfo: y, to: { group }, ...text('y') });
      await b.ok('send', { appinfo: z, to: { group }, ...text('z') });
      await inboxWith(admin, z);
      // While admin: a member's message can be recalled (the rule works, so its refusal below means something).
      // An appinfo is unique per sender: the admin names the member whose message it is.
      expect(await admin.call('recall', { appinfo: z })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
      await admin.ok('recall', { appinfo: z, from: b.user });
      await inboxWith(c, recallAppinfo({ sender: b.user, appinfo: z }), 'recall');
      await admin.ok('group.remove', { group, members: [admin.user] });
      expect(await admin.call('recall', { appinfo: y, from: b.user })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      expect(await admin.call('group.remove', { group, members: [c.user] })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      const carols = await settledInbox(c, b, c.user);
      expect(carols.filter((e) => e.kind === 'recall').map((e) => e.recall?.appinfo)).toEqual([z]);
      expect(await c.ok<{ memberCount: number }>('group.info', { group })).toMatchObject({ memberCount: 2 });
    });
  });
}
