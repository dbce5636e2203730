/**
 * GroupStore contract. Decisions pinned here: updateGroup/addMembers/removeMembers on a
 * missing group reject with NotFoundError; memberCount is stored as given (callers keep it);
 * listMembers and groupsOf are sorted; membership windows are kept oldest first.
 */
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  NotFoundError,
  canReadGseq,
  groupKey,
  inboxKey,
  visibleRange,
  type GroupKey,
  type GroupRecord,
  type GroupStore,
} from '@seqline/core';
import { acrossReopen, shuffled, uniqueTenant, useSharedStore, type StoreOpener } from './harness.ts';

export function groupStoreContract(name: string, open: StoreOpener<GroupStore>): void {
  describe(`GroupStore contract: ${name}`, () => {
    const ctx = useSharedStore(open);
    const at = (time: number, gseq = 0): { time: number; gseq: number } => ({ time, gseq });

    async function created(members: string[], tenant = uniqueTenant(), id = 'g'): Promise<GroupRecord> {
      const group = record(tenant, id);
      expect(await ctx.store.createGroup({ group, members, at: at(1000, 0) })).toBe(true);
      return group;
    }

    it('creates a group once; a second create with the same key changes nothing', async () => {
      const group = await created(['carol', 'alice', 'bob', 'alice']);
      expect(await ctx.store.getGroup(group.key)).toEqual(group);
      const again = { ...group, name: 'other', admin: 'mallory', memberCount: 1 };
      expect(await ctx.store.createGroup({ group: again, members: ['mallory'], at: at(2000, 9) })).toBe(false);
      expect(await ctx.store.getGroup(group.key)).toEqual(group);
      expect(await ctx.store.listMembers(group.key)).toEqual(['alice', 'bob', 'carol']);
    });

    it('getGroup and listMembers of an unknown group are null and empty', async () => {
      const key = groupKey(uniqueTenant(), 'nope');
      expect(await ctx.store.getGroup(key)).toBeNull();
      expect(await ctx.store.listMembers(key)).toEqual([]);
      expect(await ctx.store.getMembership({ key, user: 'alice' })).toBeNull();
    });

    it('updateGroup patches only the given fields', async () => {
      const group = await created(['alice']);
      await ctx.store.updateGroup({ key: group.key, patch: { name: 'renamed' } });
      expect(await ctx.store.getGroup(group.key)).toEqual({ ...group, name: 'renamed' });
      await ctx.store.updateGroup({ key: group.key, patch: { tier: 'large', memberCount: 150 } });
      expect(await ctx.store.getGroup(group.key)).toEqual({ ...group, name: 'renamed', tier: 'large', memberCount: 150 });
    });

    it('renameGroup sets the name and counts revisions from 1; nothing else changes', async () => {
      const group = await created(['alice', 'bob']);
      expect(group.nameRev).toBeUndefined();
      expect(await ctx.store.renameGroup({ key: group.key, name: 'crew' })).toEqual({ nameRev: 1 });
      expect(await ctx.store.getGroup(group.key)).toEqual({ ...group, name: 'crew', nameRev: 1 });
      expect(await ctx.store.renameGroup({ key: group.key, name: 'crew' })).toEqual({ nameRev: 2 });
      await ctx.store.updateGroup({ key: group.key, patch: { tier: 'large', memberCount: 150 } });
      expect(await ctx.store.getGroup(group.key)).toEqual({ ...group, name: 'crew', nameRev: 2, tier: 'large', memberCount: 150 });
      expect(await ctx.store.listMembers(group.key)).toEqual(['alice', 'bob']);
    });

    it('concurrent renames each get a revision of their own; the record keeps the highest one', async () => {
      const group = await created(['alice']);
      const names = ['a', 'b', 'c', 'd', 'e', 'f'];
      const revs = await Promise.all(names.map((name) => ctx.store.renameGroup({ key: group.key, name })));
      expect(revs.map((r) => r.nameRev).sort()).toEqual([1, 2, 3, 4, 5, 6]);
      const top = revs.findIndex((r) => r.nameRev === 6);
      expect(await ctx.store.getGroup(group.key)).toMatchObject({ name: names[top], nameRev: 6 });
    });

    it('mutations of a missing group reject with NotFoundError', async () => {
      const key = groupKey(uniqueTenant(), 'missing');
      await expect(ctx.store.renameGroup({ key, name: 'x' })).rejects.toBeInstanceOf(NotFoundError);
      await expect(ctx.store.updateGroup({ key, patch: { name: 'x' } })).rejects.toBeInstanceOf(NotFoundError);
      await expect(ctx.store.addMembers({ key, users: ['alice'], at: at(1) })).rejects.toBeInstanceOf(NotFoundError);
      await expect(ctx.store.removeMembers({ key, users: ['alice'], at: at(1) })).rejects.toBeInstanceOf(NotFoundError);
      expect(await ctx.store.getGroup(key)).toBeNull();
      expect(await ctx.store.listMembers(key)).toEqual([]);
    });

    it('initial members get a window from the creation point', async () => {
      const group = record(uniqueTenant(), 'g');
      await ctx.store.createGroup({ group, members: ['alice'], at: at(1234, 17) });
      expect(await ctx.store.getMembership({ key: group.key, user: 'alice' })).toEqual({
        user: 'alice',
        windows: [{ joinedAt: 1234, fromGseq: 17 }],
      });
      expect(await ctx.store.getMembership({ key: group.key, user: 'bob' })).toBeNull();
    });

    it('addMembers returns only users who were not members', async () => {
      const group = await created(['alice']);
      expect(await ctx.store.addMembers({ key: group.key, users: ['bob', 'alice', 'carol', 'bob'], at: at(2000, 5) })).toEqual([
        'bob',
        'carol',
      ]);
      expect(await ctx.store.addMembers({ key: group.key, users: ['bob'], at: at(3000, 6) })).toEqual([]);
      expect(await ctx.store.listMembers(group.key)).toEqual(['alice', 'bob', 'carol']);
      expect(await ctx.store.getMembership({ key: group.key, user: 'bob' })).toEqual({
        user: 'bob',
        windows: [{ joinedAt: 2000, fromGseq: 5 }],
      });
    });

    it('removeMembers closes the open window of current members only', async () => {
      const group = await created(['alice', 'bob']);
      expect(await ctx.store.removeMembers({ key: group.key, users: ['bob', 'zed', 'bob'], at: at(5000, 40) })).toEqual(['bob']);
      expect(await ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(6000, 41) })).toEqual([]);
      expect(await ctx.store.listMembers(group.key)).toEqual(['alice']);
      expect(await ctx.store.getMembership({ key: group.key, user: 'bob' })).toEqual({
        user: 'bob',
        windows: [{ joinedAt: 1000, fromGseq: 0, removedAt: 5000, toGseq: 40 }],
      });
    });

    it('re-joining opens a new window after the closed one', async () => {
      const group = await created(['alice', 'bob']);
      await ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(2000, 10) });
      expect(await ctx.store.addMembers({ key: group.key, users: ['bob'], at: at(3000, 20) })).toEqual(['bob']);
      expect(await ctx.store.listMembers(group.key)).toEqual(['alice', 'bob']);
      await ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(4000, 30) });
      expect((await ctx.store.getMembership({ key: group.key, user: 'bob' }))?.windows).toEqual([
        { joinedAt: 1000, fromGseq: 0, removedAt: 2000, toGseq: 10 },
        { joinedAt: 3000, fromGseq: 20, removedAt: 4000, toGseq: 30 },
      ]);
    });

    // A remover or joiner can read a stale group head or a skewed clock: the store must clamp
    // (core's openWindow/closeWindow), never persist a window that inverts or overlaps.
    it('a removal at an older time and gseq than the join closes the window at its start, never inverted', async () => {
      const group = await created(['alice']);
      await ctx.store.addMembers({ key: group.key, users: ['bob'], at: at(100, 50) });
      expect(await ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(90, 40) })).toEqual(['bob']);
      const bob = await ctx.store.getMembership({ key: group.key, user: 'bob' });
      expect(bob?.windows).toEqual([{ joinedAt: 100, fromGseq: 50, removedAt: 100, toGseq: 50 }]);
      for (const w of bob?.windows ?? []) {
        expect(w.removedAt).toBeGreaterThanOrEqual(w.joinedAt);
        expect(w.toGseq).toBeGreaterThanOrEqual(w.fromGseq);
      }
      expect(canReadGseq(bob ?? null, 45)).toBe(false);
      expect(canReadGseq(bob ?? null, 50)).toBe(false);
      expect(visibleRange(bob ?? null)).toEqual([]);
      expect(await ctx.store.listMembers(group.key)).toEqual(['alice']);
    });

    it('a re-join at a stale point starts where the previous window ended: no overlap, no gap re-read', async () => {
      const group = await created(['alice']);
      await ctx.store.addMembers({ key: group.key, users: ['bob'], at: at(100, 50) });
      await ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(200, 80) });
      expect(await ctx.store.addMembers({ key: group.key, users: ['bob'], at: at(150, 60) })).toEqual(['bob']);
      const bob = await ctx.store.getMembership({ key: group.key, user: 'bob' });
      expect(bob?.windows).toEqual([
        { joinedAt: 100, fromGseq: 50, removedAt: 200, toGseq: 80 },
        { joinedAt: 200, fromGseq: 80 },
      ]);
      const [first, second] = bob?.windows ?? [];
      expect(second?.fromGseq).toBeGreaterThanOrEqual(first?.toGseq ?? Infinity);
      expect(second?.joinedAt).toBeGreaterThanOrEqual(first?.removedAt ?? Infinity);
      // Entry 70 was readable in the first window; the re-join must not make it a second window's.
      expect(bob?.windows.filter((w) => w.fromGseq < 70 && 70 <= (w.toGseq ?? Infinity))).toHaveLength(1);
      expect(bob?.windows.filter((w) => w.fromGseq < 81 && 81 <= (w.toGseq ?? Infinity))).toHaveLength(1);
      expect(visibleRange(bob ?? null)).toEqual([{ after: 50, upTo: Infinity }]);
      // Left at 80 then back: removed again at a stale 75, the window still ends at its start.
      await ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(190, 75) });
      const again = await ctx.store.getMembership({ key: group.key, user: 'bob' });
      expect(again?.windows[1]).toEqual({ joinedAt: 200, fromGseq: 80, removedAt: 200, toGseq: 80 });
      expect(canReadGseq(again ?? null, 81)).toBe(false);
    });

    it('a stale re-join racing a removal never yields overlapping windows', async () => {
      const group = await created(['alice', 'bob']);
      await ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(5000, 400) });
      await Promise.all([
        ctx.store.addMembers({ key: group.key, users: ['bob'], at: at(4000, 300) }),
        ctx.store.removeMembers({ key: group.key, users: ['bob'], at: at(3000, 200) }),
      ]);
      const windows = (await ctx.store.getMembership({ key: group.key, user: 'bob' }))?.windows ?? [];
      for (const [i, w] of windows.entries()) {
        expect(w.toGseq ?? Infinity).toBeGreaterThanOrEqual(w.fromGseq);
        expect(w.removedAt ?? Infinity).toBeGreaterThanOrEqual(w.joinedAt);
        const previous = windows[i - 1];
        if (previous !== undefined) {
          expect(w.fromGseq).toBeGreaterThanOrEqual(previous.toGseq ?? Infinity);
          expect(w.joinedAt).toBeGreaterThanOrEqual(previous.removedAt ?? Infinity);
        }
      }
    });

    it('initial members of a group created at a malformed point are refused with BadRequestError, nothing stored', async () => {
      const group = record(uniqueTenant(), 'bad-at');
      await expect(ctx.store.createGroup({ group, members: ['alice'], at: { time: Number.NaN, gseq: 0 } })).rejects.toBeInstanceOf(
        BadRequestError,
      );
      await expect(ctx.store.createGroup({ group, members: ['alice'], at: { time: 1, gseq: -1 } })).rejects.toBeInstanceOf(BadRequestError);
      expect(await ctx.store.getGroup(group.key)).toBeNull();
      expect(await ctx.store.getMembership({ key: group.key, user: 'alice' })).toBeNull();
      const ok = await created(['alice']);
      await expect(ctx.store.addMembers({ key: ok.key, users: ['bob'], at: { time: 1, gseq: 1.5 } })).rejects.toBeInstanceOf(
        BadRequestError,
      );
      await expect(
        ctx.store.removeMembers({ key: ok.key, users: ['alice'], at: { time: Number.POSITIVE_INFINITY, gseq: 1 } }),
      ).rejects.toBeInstanceOf(BadRequestError);
      expect(await ctx.store.getMembership({ key: ok.key, user: 'bob' })).toBeNull();
      expect(await ctx.store.listMembers(ok.key)).toEqual(['alice']);
    });

    it('listMemberships lists the current members with all their windows, sorted, as getMembership has them', async () => {
      const group = await created(['carol', 'alice', 'bob']);
      await ctx.store.removeMembers({ key: group.key, users: ['bob', 'carol'], at: at(2000, 10) });
      await ctx.store.addMembers({ key: group.key, users: ['bob', 'dave'], at: at(3000, 20) });
      const listed = await ctx.store.listMemberships(group.key);
      expect(listed.map((m) => m.user)).toEqual(await ctx.store.listMembers(group.key));
      expect(listed.map((m) => m.user)).toEqual(['alice', 'bob', 'dave']); // carol left
      for (const m of listed) expect(m).toEqual(await ctx.store.getMembership({ key: group.key, user: m.user }));
      expect(listed[1]?.windows).toEqual([
        { joinedAt: 1000, fromGseq: 0, removedAt: 2000, toGseq: 10 },
        { joinedAt: 3000, fromGseq: 20 },
      ]);
      expect(await ctx.store.listMemberships(groupKey(uniqueTenant(), 'none'))).toEqual([]);
    });

    it('groupsOf lists every group ever joined, within the tenant, sorted', async () => {
      const tenant = uniqueTenant();
      const g2 = await created(['alice', 'bob'], tenant, 'g2');
      const g1 = await created(['alice'], tenant, 'g1');
      await created(['bob'], tenant, 'g3');
      await ctx.store.removeMembers({ key: g2.key, users: ['alice'], at: at(2000, 1) });
      expect(await ctx.store.groupsOf(inboxKey(tenant, 'alice'))).toEqual([g1.key, g2.key]);
      expect(await ctx.store.groupsOf(inboxKey(tenant, 'bob'))).toEqual([groupKey(tenant, 'g2'), groupKey(tenant, 'g3')]);
      expect(await ctx.store.groupsOf(inboxKey(tenant, 'nobody'))).toEqual([]);
      expect(await ctx.store.groupsOf(inboxKey(uniqueTenant(), 'alice'))).toEqual([]);
      await ctx.store.addMembers({ key: groupKey(tenant, 'g3'), users: ['alice'], at: at(3000, 2) });
      expect(await ctx.store.groupsOf(inboxKey(tenant, 'alice'))).toEqual([g1.key, g2.key, groupKey(tenant, 'g3')]);
    });

    it('racing adds of one user open exactly one window', async () => {
      const group = await created(['alice']);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => ctx.store.addMembers({ key: group.key, users: ['bob'], at: at(2000 + i, i) })),
      );
      expect(results.flat()).toEqual(['bob']);
      expect((await ctx.store.getMembership({ key: group.key, user: 'bob' }))?.windows).toHaveLength(1);
    });

    it('racing adds and removes of different users all apply', async () => {
      const initial = Array.from({ length: 30 }, (_, i) => `old${String(i).padStart(2, '0')}`);
      const joining = Array.from({ length: 30 }, (_, i) => `new${String(i).padStart(2, '0')}`);
      const group = await created(initial);
      await Promise.all(
        shuffled([
          ...joining.map((user) => () => ctx.store.addMembers({ key: group.key, users: [user], at: at(2000) })),
          ...initial.map((user) => () => ctx.store.removeMembers({ key: group.key, users: [user], at: at(2000) })),
        ]).map((op) => op()),
      );
      expect(await ctx.store.listMembers(group.key)).toEqual(joining);
    });

    it('write-fanout snapshots: recorded by message and attempt (sender, appinfo, send time), read back as recorded, kept across a reopen', async () => {
      const key = groupKey(uniqueTenant(), 'g');
      const now = Date.now();
      const ref = (sender: string, appinfo: string, sendTime = now) => ({ key, sender, appinfo, sendTime });
      expect(await ctx.store.recordedRecipients(ref('alice', 'm1'))).toBeNull();
      await acrossReopen(
        open,
        async (store) => {
          await store.recordRecipients({ ...ref('alice', 'm1'), recipients: ['bob', 'carol 群'] });
          // Another sender's message with the same appinfo is another snapshot; a group of one has none to reach.
          await store.recordRecipients({ ...ref('bob', 'm1'), recipients: [] });
          // A resend's attempt (another send time) records apart; the same attempt again replaces.
          await store.recordRecipients({ ...ref('alice', 'm1', now + 5), recipients: ['x'] });
          await store.recordRecipients({ ...ref('alice', 'm2'), recipients: ['x'] });
          await store.recordRecipients({ ...ref('alice', 'm2'), recipients: ['y', 'z'] });
        },
        async (store) => {
          expect(await store.recordedRecipients(ref('alice', 'm1'))).toEqual(['bob', 'carol 群']);
          expect(await store.recordedRecipients(ref('bob', 'm1'))).toEqual([]);
          expect(await store.recordedRecipients(ref('alice', 'm1', now + 5))).toEqual(['x']);
          expect(await store.recordedRecipients(ref('alice', 'm2'))).toEqual(['y', 'z']);
          expect(await store.recordedRecipients(ref('alice', 'm2', now + 1))).toBeNull();
          expect(await store.recordedRecipients({ ...ref('alice', 'm1'), key: groupKey(uniqueTenant(), 'g') })).toBeNull();
        },
      );
    });

    it('groups and windows survive a reopen', async () => {
      const tenant = uniqueTenant();
      const group = record(tenant, 'g');
      await acrossReopen(
        open,
        async (store) => {
          await store.createGroup({ group, members: ['alice', 'bob'], at: at(1000, 0) });
          await store.removeMembers({ key: group.key, users: ['bob'], at: at(2000, 3) });
        },
        async (store) => {
          expect(await store.getGroup(group.key)).toEqual(group);
          expect(await store.listMembers(group.key)).toEqual(['alice']);
          expect((await store.getMembership({ key: group.key, user: 'bob' }))?.windows).toEqual([
            { joinedAt: 1000, fromGseq: 0, removedAt: 2000, toGseq: 3 },
          ]);
          expect(await store.groupsOf(inboxKey(tenant, 'bob'))).toEqual([group.key]);
          expect(await store.createGroup({ group, members: [], at: at(3000) })).toBe(false);
        },
      );
    });
  });
}

function record(tenant: string, id: string): GroupRecord & { key: GroupKey } {
  return { key: groupKey(tenant, id), tenant, id, name: `group ${id} 群`, admin: 'alice', tier: 'small', memberCount: 3, createdAt: 1000 };
}
