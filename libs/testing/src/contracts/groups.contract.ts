/**
 * GroupStore contract. Decisions pinned here: updateGroup/addMembers/removeMembers on a
 * missing group reject with NotFoundError; memberCount is stored as given (callers keep it);
 * listMembers and groupsOf are sorted; membership windows are kept oldest first.
 */
import { describe, expect, it } from 'vitest';
import { NotFoundError, groupKey, inboxKey, type GroupStore } from '@seqline/core';
import { acrossReopen, uniqueTenant, useSharedStore, type StoreOpener } from './harness.ts';
import { at, createdIn, groupWindowCases, record } from './group-windows.cases.ts';

export function groupStoreContract(name: string, open: StoreOpener<GroupStore>): void {
  describe(`GroupStore contract: ${name}`, () => {
    const ctx = useSharedStore(open);
    const created = createdIn(ctx);

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

    groupWindowCases(ctx);

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
