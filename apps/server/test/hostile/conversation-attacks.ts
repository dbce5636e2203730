/**
 * Attacks on the v1.1 conversation ops (issue #26), one scenario set for the embedded server
 * and the distributed stack: a conversation the caller is not in, seqs that are not its own,
 * someone else's message, replayed and forged edit targets, mentions of outsiders, limits out
 * of range, malformed arguments. Each must get its typed error and write nothing: the heads of
 * the inboxes concerned do not move, and what was visible stays visible.
 */
import { describe, expect, it } from 'vitest';
import { appinfo, waitFor, type MutableClock, type TestClient, type WireEntry } from '../harness.ts';

export interface ConversationAttackStack {
  connect(user: string): Promise<TestClient>;
  /** A user id no other test of this run uses. */
  user(prefix: string): string;
}

const text = (t: string) => ({ type: 'text', body: { text: t } });

async function head(c: TestClient): Promise<number> {
  return (await c.ok<{ headSeq: number }>('sync', { maxSeq: 0, limit: 1 })).headSeq;
}

/** The call is refused with `code`, and the caller's inbox head (and `others'`) did not move. */
async function refusedWithoutWrite(
  caller: TestClient,
  op: string,
  args: Record<string, unknown>,
  code: string,
  others: TestClient[] = [],
): Promise<void> {
  const watched = [caller, ...others];
  const before = await Promise.all(watched.map(head));
  const r = await caller.call(op, args);
  expect(r.ok ? 'ok' : r.error.code, `${op} ${JSON.stringify(args).slice(0, 120)}`).toBe(code);
  // Whatever an accepted call would have queued lands within moments: give it the chance.
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(await Promise.all(watched.map(head)), `heads after ${op}`).toEqual(before);
}

async function entryOf(c: TestClient, a: string): Promise<WireEntry> {
  return waitFor(async () => (await c.syncAll()).find((e) => e.appinfo === a && e.kind === 'msg'), 15_000, `${c.user} to hold ${a}`);
}

/** `clock`: the server's clock, when the test can move it (embedded; distributed processes keep their own). */
export function describeConversationAttacks(mode: string, stack: () => ConversationAttackStack, clock?: () => MutableClock): void {
  describe(`conversation ops under attack (${mode})`, () => {
    it('read and clear of a conversation the caller is not in: NOT_FOUND, nothing written', async () => {
      const s = stack();
      const [alice, bob, carol] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob')), s.connect(s.user('carol'))]);
      await bob.ok('send', { appinfo: appinfo(), to: { user: alice.user }, ...text('hi') });
      // A group alice is not in (carol's and bob's), and a user alice never talked to.
      const { group } = await carol.ok<{ group: string }>('group.create', { name: 'private', members: [bob.user] });
      await carol.ok('send', { appinfo: appinfo(), to: { group }, ...text('secret') });
      for (const conv of [
        { type: 'group', id: group },
        { type: 'user', id: carol.user },
        { type: 'group', id: s.user('nosuchgroup') },
      ]) {
        await refusedWithoutWrite(alice, 'read', { conv, upToSeq: 1 }, 'NOT_FOUND');
        await refusedWithoutWrite(alice, 'clear', { conv }, 'NOT_FOUND');
        await refusedWithoutWrite(alice, 'clear', { conv, upToSeq: 10 }, 'NOT_FOUND');
        const h = await alice.call('history', { conv });
        expect(h).toMatchObject({ ok: true, entries: [] });
      }
    });

    it("delete of seqs not in the inbox, or of another user's seq numbers: NOT_FOUND, nothing hidden", async () => {
      const s = stack();
      const [alice, bob] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob'))]);
      const a = appinfo();
      await bob.ok('send', { appinfo: a, to: { user: alice.user }, ...text('keep me') });
      const mine = await entryOf(alice, a);
      // Seq numbers of bob's inbox that alice's does not have (seqs come from per-shard
      // sections, so which inbox runs ahead depends on the mode).
      for (let i = 0; i < 5; i++) await bob.ok('send', { appinfo: appinfo(), to: { user: bob.user }, ...text(`note ${i}`) });
      const alicesSeqs = new Set((await alice.syncAll()).map((e) => e.seq));
      const bobsOnly = (await bob.syncAll()).map((e) => e.seq).filter((seq) => !alicesSeqs.has(seq));
      expect(bobsOnly.length).toBeGreaterThan(0);
      await refusedWithoutWrite(alice, 'delete', { seqs: [bobsOnly.at(-1)!] }, 'NOT_FOUND', [bob]);
      await refusedWithoutWrite(alice, 'delete', { seqs: [mine.seq, Number.MAX_SAFE_INTEGER - 1] }, 'NOT_FOUND');
      // The one real seq in the refused call was not deleted.
      expect((await alice.syncAll()).map((e) => e.appinfo)).toContain(a);
    });

    it("edit of another's message, of a server entry or of an unknown appinfo; replayed edits", async () => {
      const s = stack();
      const [alice, bob, carol] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob')), s.connect(s.user('carol'))]);
      const fromBob = appinfo();
      await bob.ok('send', { appinfo: fromBob, to: { user: alice.user }, ...text('original') });
      await entryOf(alice, fromBob);
      // An edit names the caller's own message (an appinfo is unique per sender): another's is not found.
      await refusedWithoutWrite(alice, 'edit', { appinfo: fromBob, body: 'forged' }, 'NOT_FOUND', [bob]);
      const { group } = await alice.ok<{ group: string }>('group.create', { name: 'g', members: [bob.user, carol.user] });
      const inGroup = appinfo();
      await bob.ok('send', { appinfo: inGroup, to: { group }, ...text('group original') });
      await entryOf(carol, inGroup);
      // Not even the group's admin edits someone else's message (recall would allow it).
      await refusedWithoutWrite(alice, 'edit', { appinfo: inGroup, body: 'admin forged' }, 'NOT_FOUND', [bob, carol]);
      await refusedWithoutWrite(carol, 'edit', { appinfo: inGroup, body: 'member forged' }, 'NOT_FOUND', [bob]);
      await refusedWithoutWrite(alice, 'edit', { appinfo: appinfo(), body: 'x' }, 'NOT_FOUND');
      // A server entry (group.create) is no message: its appinfo names nothing editable.
      const serverEntry = (await alice.syncAll()).find((e) => e.kind === 'group');
      await refusedWithoutWrite(alice, 'edit', { appinfo: serverEntry!.appinfo, body: 'x' }, 'NOT_FOUND');

      // The sender's edit; replayed, it is one more edit of the same message, never a new one.
      const first = await bob.ok<{ seq: number }>('edit', { appinfo: inGroup, body: { v: 1 } });
      const again = await bob.ok<{ seq: number }>('edit', { appinfo: inGroup, body: { v: 1 } });
      expect(again.seq).toBeGreaterThan(first.seq);
      const editEntry = (await bob.syncAll()).find((e) => e.seq === first.seq)!;
      expect(editEntry.kind).toBe('edit');
      // Both edits reach carol (write-fanout is asynchronous): the heads watched below then stay.
      const editsOf = (all: WireEntry[]) =>
        all.filter((e) => e.kind === 'edit' && (e as { edit?: { appinfo: string } }).edit?.appinfo === inGroup);
      await waitFor(async () => editsOf(await carol.syncAll()).length === 2, 15_000, 'both edits to reach carol');
      // Its server-made appinfo can be neither edited (not a message) nor sent (it has ':').
      await refusedWithoutWrite(bob, 'edit', { appinfo: editEntry.appinfo, body: 'x' }, 'NOT_FOUND');
      await refusedWithoutWrite(bob, 'send', { appinfo: editEntry.appinfo, to: { group }, ...text('x') }, 'BAD_REQUEST', [carol]);
      const shown = await waitFor(
        async () => {
          const r = await carol.ok<{ entries: WireEntry[] }>('history', { conv: { type: 'group', id: group } });
          const e = r.entries.find((x) => x.appinfo === inGroup);
          return JSON.stringify(e?.body) === '{"v":1}' ? e : undefined;
        },
        15_000,
        'the edit to reach carol',
      );
      expect(shown.from).toBe(bob.user);
      // A recalled message cannot be edited back to life.
      await bob.ok('recall', { appinfo: inGroup });
      await waitFor(async () => (await carol.syncAll()).some((e) => e.kind === 'recall'), 15_000, 'the recall to reach carol');
      await refusedWithoutWrite(bob, 'edit', { appinfo: inGroup, body: 'revived' }, 'NOT_FOUND', [carol]);
    });

    it('edit by editId: malformed refused, a replay stores nothing, other content under it FORBIDDEN', async () => {
      const s = stack();
      const [alice, bob] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob'))]);
      const a = appinfo();
      await alice.ok('send', { appinfo: a, to: { user: bob.user }, ...text('v0') });
      await entryOf(bob, a);
      for (const editId of ['', 'has:colon', 'x'.repeat(129), 'ctl\u0001', 7, null]) {
        await refusedWithoutWrite(alice, 'edit', { appinfo: a, body: 'bad id', editId }, 'BAD_REQUEST', [bob]);
      }
      const editId = appinfo();
      const first = await alice.ok<{ seq: number }>('edit', { appinfo: a, body: { v: 1 }, editId });
      const editsAt = async (c: TestClient) => (await c.syncAll()).filter((e) => e.kind === 'edit').length;
      await waitFor(async () => (await editsAt(bob)) === 1, 15_000, 'the edit to reach bob');
      // Replayed: the same seq, nothing new anywhere (a retry resumes, it never edits twice).
      const heads = await Promise.all([alice, bob].map(head));
      expect(await alice.ok<{ seq: number }>('edit', { appinfo: a, body: { v: 1 }, editId })).toEqual(
        expect.objectContaining({ seq: first.seq }),
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await Promise.all([alice, bob].map(head))).toEqual(heads);
      // The same id for other content, or for another message: refused, nothing stored.
      await refusedWithoutWrite(alice, 'edit', { appinfo: a, body: { v: 2 }, editId }, 'FORBIDDEN', [bob]);
      const b = appinfo();
      await alice.ok('send', { appinfo: b, to: { user: bob.user }, ...text('other') });
      await entryOf(bob, b);
      await refusedWithoutWrite(alice, 'edit', { appinfo: b, body: { v: 1 }, editId }, 'FORBIDDEN', [bob]);
      // Another user's id space is their own: bob's edit under alice's id is bob's edit.
      const c = appinfo();
      await bob.ok('send', { appinfo: c, to: { user: alice.user }, ...text('mine') });
      await entryOf(alice, c);
      expect(await bob.ok<{ seq: number }>('edit', { appinfo: c, body: { v: 1 }, editId })).toHaveProperty('seq');
      expect(await editsAt(bob)).toBe(2);
    });

    it.runIf(clock !== undefined)('edit past the recall window: RECALL_EXPIRED, nothing written', async () => {
      const s = stack();
      const serverClock = clock!();
      const [alice, bob] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob'))]);
      const a = appinfo();
      await alice.ok('send', { appinfo: a, to: { user: bob.user }, ...text('old') });
      await entryOf(bob, a);
      serverClock.offset += 24 * 3600 * 1000 + 1000;
      try {
        await refusedWithoutWrite(alice, 'edit', { appinfo: a, body: 'too late' }, 'RECALL_EXPIRED', [bob]);
      } finally {
        serverClock.offset -= 24 * 3600 * 1000 + 1000;
      }
    });

    it('mentions of non-members, @all in a 1:1: BAD_REQUEST, nothing stored anywhere', async () => {
      const s = stack();
      const [alice, bob, eve] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob')), s.connect(s.user('eve'))]);
      const { group } = await alice.ok<{ group: string }>('group.create', { name: 'g', members: [bob.user] });
      // bob's group.create notice first: the heads watched below must not move for it.
      await waitFor(async () => (await bob.syncAll()).some((e) => e.kind === 'group'), 15_000, 'bob to learn of the group');
      const send = (to: object, mentions: unknown) => ({ appinfo: appinfo(), to, ...text('@you'), mentions });
      await refusedWithoutWrite(alice, 'send', send({ group }, [eve.user]), 'BAD_REQUEST', [bob, eve]);
      await refusedWithoutWrite(alice, 'send', send({ group }, [bob.user, eve.user]), 'BAD_REQUEST', [bob, eve]);
      await refusedWithoutWrite(alice, 'send', send({ user: bob.user }, [eve.user]), 'BAD_REQUEST', [bob, eve]);
      await refusedWithoutWrite(alice, 'send', send({ user: bob.user }, ['@all']), 'BAD_REQUEST', [bob]);
      await refusedWithoutWrite(alice, 'send', send({ group }, ['t2:bob']), 'BAD_REQUEST', [bob]);
      // The same mentions of a member are fine, and stored on the copies.
      const ok = appinfo();
      await alice.ok('send', { appinfo: ok, to: { group }, ...text('@bob'), mentions: [bob.user] });
      expect((await entryOf(bob, ok)) as WireEntry & { mentions?: string[] }).toMatchObject({ mentions: [bob.user] });
    });

    it('limits out of range and malformed arguments: BAD_REQUEST, nothing written', async () => {
      const s = stack();
      const [alice, bob] = await Promise.all([s.connect(s.user('alice')), s.connect(s.user('bob'))]);
      await bob.ok('send', { appinfo: appinfo(), to: { user: alice.user }, ...text('hi') });
      const conv = { type: 'user', id: bob.user };
      const cases: Array<[string, Record<string, unknown>]> = [
        ['conversations', { limit: 501 }],
        ['conversations', { limit: 0 }],
        ['conversations', { lastMessages: 51 }],
        ['conversations', { beforeLastSeq: -1 }],
        ['read', { conv, upToSeq: 0 }],
        ['read', { conv }],
        ['read', { seqs: [1], conv, upToSeq: 1 }],
        ['read', { conv: { type: 'user', id: `t2:${bob.user}` }, upToSeq: 1 }],
        ['clear', { conv: { type: 'channel', id: bob.user } }],
        ['clear', { conv, upToSeq: 1.5 }],
        ['delete', { seqs: [] }],
        ['delete', { seqs: ['1'] }],
        ['delete', { seqs: Array.from({ length: 1001 }, (_, i) => i + 1) }],
        ['edit', { appinfo: 'x', body: undefined }],
        ['edit', { appinfo: '', body: 1 }],
        ['history', { conv: { id: bob.user } }],
      ];
      for (const [op, args] of cases) await refusedWithoutWrite(alice, op, args, 'BAD_REQUEST');
      await refusedWithoutWrite(alice, 'edit', { appinfo: 'x', body: 'y'.repeat(70_000) }, 'TOO_LARGE');
    });
  });
}
