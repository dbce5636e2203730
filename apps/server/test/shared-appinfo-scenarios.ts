/**
 * Two honest users may choose the same appinfo: appinfos are unique per sender only (a client
 * may number its messages `local-1`, `local-2`…). A recipient's inbox must store both messages,
 * deliver both by sync and by push, and still answer each sender's resend as a duplicate with
 * the original seq. One scenario set, run against the embedded server and the distributed stack.
 */
import { describe, expect, it } from 'vitest';
import { waitFor, type TestClient, type WireEntry } from './harness.ts';
import type { Stack } from './hostile/appinfo-attacks.ts';

export interface SharedAppinfoStack extends Stack {
  /** Creates a read-fanout (huge) group of `owner` and `members`; absent: that case is skipped. */
  hugeGroup?(owner: TestClient, members: string[]): Promise<string>;
}

interface ConversationsReply {
  convs: Array<{ conv: { type: string; id: string }; unread: number }>;
}

const LOCAL = 'local-1';
const text = (body: string) => ({ type: 'text', body: { text: body } });
type Sent = { seq: number; duplicate: boolean };

/** The inbox's messages with `appinfo`, as [from, text], once there are `count` of them. */
async function copiesOf(c: TestClient, appinfo: string, count: number): Promise<Array<[string, unknown]>> {
  const found = await waitFor(
    async () => {
      const all = (await c.syncAll()).filter((e) => e.kind === 'msg' && e.appinfo === appinfo);
      return all.length >= count ? all : undefined;
    },
    15_000,
    `${c.user} to hold ${count} messages ${appinfo}`,
  );
  return found.map((e) => [e.from, (e.body as { text: string }).text]);
}

/** The pushed messages with `appinfo`, as [from, text], once `count` were pushed. */
async function pushedOf(c: TestClient, appinfo: string, count: number): Promise<Array<[string, unknown]>> {
  const pushed = (): WireEntry[] => c.pushes.flatMap((p) => p.entries).filter((e) => e.kind === 'msg' && e.appinfo === appinfo);
  await waitFor(() => pushed().length >= count, 15_000, `${c.user} to be pushed ${count} messages ${appinfo}`);
  return pushed().map((e) => [e.from, (e.body as { text: string }).text]);
}

const byFrom = (rows: Array<[string, unknown]>) => [...rows].sort((a, b) => a[0].localeCompare(b[0]));

export function describeSharedAppinfo(mode: string, stack: () => SharedAppinfoStack): void {
  describe(`an appinfo is unique per sender only (${mode})`, () => {
    it('alice and carol each send local-1 to bob: bob gets both by sync and push; resends stay duplicates', async () => {
      const s = stack();
      const [alice, carol, bob] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('carol')), s.connect(s.user('bob'))]);
      const a = await alice.ok<Sent>('send', { appinfo: LOCAL, to: { user: bob.user }, ...text('from alice') });
      await copiesOf(bob, LOCAL, 1);
      const c = await carol.ok<Sent>('send', { appinfo: LOCAL, to: { user: bob.user }, ...text('from carol') });
      expect([a.duplicate, c.duplicate]).toEqual([false, false]);

      const want = byFrom([
        [alice.user, 'from alice'],
        [carol.user, 'from carol'],
      ]);
      expect(byFrom(await copiesOf(bob, LOCAL, 2))).toEqual(want);
      expect(byFrom(await pushedOf(bob, LOCAL, 2))).toEqual(want);

      // Each sender's resend is answered with its own original seq, and stores nothing.
      expect(await alice.ok<Sent>('send', { appinfo: LOCAL, to: { user: bob.user }, ...text('from alice') })).toMatchObject({
        seq: a.seq,
        duplicate: true,
      });
      expect(await carol.ok<Sent>('send', { appinfo: LOCAL, to: { user: bob.user }, ...text('from carol') })).toMatchObject({
        seq: c.seq,
        duplicate: true,
      });
      // A marker sent after the resends, on the same path: anything they delivered is there by then.
      await alice.ok('send', { appinfo: 'local-2', to: { user: bob.user }, ...text('marker') });
      await copiesOf(bob, 'local-2', 1);
      expect(byFrom(await copiesOf(bob, LOCAL, 2))).toEqual(want);
      expect((await alice.syncAll()).filter((e) => e.appinfo === LOCAL).map((e) => e.seq)).toEqual([a.seq]);
    });

    it("a recall names its message's sender: carol's recall of local-1 leaves alice's local-1 alone", async () => {
      const s = stack();
      const [alice, carol, bob] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('carol')), s.connect(s.user('bob'))]);
      const a = await alice.ok<Sent & { sendTime: number }>('send', { appinfo: LOCAL, to: { user: bob.user }, ...text('from alice') });
      const c = await carol.ok<Sent & { sendTime: number }>('send', { appinfo: LOCAL, to: { user: bob.user }, ...text('from carol') });
      await copiesOf(bob, LOCAL, 2);
      await carol.ok('recall', { appinfo: LOCAL });
      const recall = await waitFor(
        async () => (await bob.syncAll()).find((e) => e.kind === 'recall'),
        15_000,
        `a recall in ${bob.user}'s inbox`,
      );
      expect(recall).toMatchObject({ from: carol.user, recall: { appinfo: LOCAL, sendTime: c.sendTime, from: carol.user } });
      // Bob's list: alice's message still unread, carol's recalled one no longer counted.
      const unread = async (): Promise<Record<string, number>> => {
        const r = await bob.ok<ConversationsReply>('conversations', { limit: 10 });
        return Object.fromEntries(r.convs.map((conv) => [conv.conv.id, conv.unread]));
      };
      expect(await unread()).toEqual({ [alice.user]: 1, [carol.user]: 0 });
      // Alice's own recall is a recall of its own (not carol's again), and her resend still a duplicate.
      await alice.ok('recall', { appinfo: LOCAL });
      await waitFor(async () => (await bob.syncAll()).filter((e) => e.kind === 'recall').length === 2, 15_000, 'both recalls');
      expect(await unread()).toEqual({ [alice.user]: 0, [carol.user]: 0 });
      expect(await alice.ok<Sent>('send', { appinfo: LOCAL, to: { user: bob.user }, ...text('from alice') })).toMatchObject({
        seq: a.seq,
        duplicate: true,
      });
    });

    it('a read-fanout group stream holds cs1 and cs2’s local-1; resends stay duplicates', async (ctx) => {
      const s = stack();
      if (s.hugeGroup === undefined) return ctx.skip();
      const [cs1, cs2, member] = await Promise.all([s.connect(s.user('cs1')), s.connect(s.user('cs2')), s.connect(s.user('member'))]);
      const group = await s.hugeGroup(cs1, [cs2.user, member.user]);
      const one = await cs1.ok<Sent>('send', { appinfo: LOCAL, to: { group }, ...text('cs1') });
      const two = await cs2.ok<Sent>('send', { appinfo: LOCAL, to: { group }, ...text('cs2') });
      expect([one.duplicate, two.duplicate]).toEqual([false, false]);
      type History = { messages: WireEntry[] };
      const stream = async (): Promise<Array<[string, unknown]>> =>
        (await member.ok<History>('group.history', { group, afterGseq: 0 })).messages
          .filter((m) => m.kind === 'msg' && m.appinfo === LOCAL)
          .map((m) => [m.from, (m.body as { text: string }).text]);
      const want = byFrom([
        [cs1.user, 'cs1'],
        [cs2.user, 'cs2'],
      ]);
      expect(
        byFrom(await waitFor(async () => ((await stream()).length === 2 ? stream() : undefined), 15_000, 'both in the stream')),
      ).toEqual(want);
      const pushed = () => member.groupPushes.flatMap((p) => p.messages).filter((m) => m.kind === 'msg' && m.appinfo === LOCAL);
      await waitFor(() => pushed().length === 2, 15_000, 'both group pushes');
      expect(byFrom(pushed().map((m) => [m.from, (m.body as { text: string }).text]))).toEqual(want);
      expect(await cs2.ok<Sent>('send', { appinfo: LOCAL, to: { group }, ...text('cs2') })).toMatchObject({
        seq: two.seq,
        duplicate: true,
      });
      expect(await cs1.ok<Sent>('send', { appinfo: LOCAL, to: { group }, ...text('cs1') })).toMatchObject({
        seq: one.seq,
        duplicate: true,
      });
      expect(byFrom(await stream())).toEqual(want);
    });

    it('a member of G1 and G2 gets cs1 and cs2’s local-1; resends in either group stay duplicates', async () => {
      const s = stack();
      const [cs1, cs2, member] = await Promise.all([s.connect(s.user('cs1')), s.connect(s.user('cs2')), s.connect(s.user('member'))]);
      const g1 = await cs1.ok<{ group: string }>('group.create', { name: 'G1', members: [member.user] });
      const g2 = await cs2.ok<{ group: string }>('group.create', { name: 'G2', members: [member.user] });
      const one = await cs1.ok<Sent>('send', { appinfo: LOCAL, to: { group: g1.group }, ...text('in G1') });
      await copiesOf(member, LOCAL, 1);
      const two = await cs2.ok<Sent>('send', { appinfo: LOCAL, to: { group: g2.group }, ...text('in G2') });
      expect([one.duplicate, two.duplicate]).toEqual([false, false]);

      const want = byFrom([
        [cs1.user, 'in G1'],
        [cs2.user, 'in G2'],
      ]);
      expect(byFrom(await copiesOf(member, LOCAL, 2))).toEqual(want);
      expect(byFrom(await pushedOf(member, LOCAL, 2))).toEqual(want);
      const convs = (await member.syncAll()).filter((e) => e.appinfo === LOCAL).map((e) => e.conv.id);
      expect(convs.sort()).toEqual([g1.group, g2.group].sort());

      expect(await cs1.ok<Sent>('send', { appinfo: LOCAL, to: { group: g1.group }, ...text('in G1') })).toMatchObject({
        seq: one.seq,
        duplicate: true,
      });
      expect(await cs2.ok<Sent>('send', { appinfo: LOCAL, to: { group: g2.group }, ...text('in G2') })).toMatchObject({
        seq: two.seq,
        duplicate: true,
      });
      await cs1.ok('send', { appinfo: 'local-2', to: { group: g1.group }, ...text('marker') });
      await copiesOf(member, 'local-2', 1);
      expect(byFrom(await copiesOf(member, LOCAL, 2))).toEqual(want);
    });
  });
}
