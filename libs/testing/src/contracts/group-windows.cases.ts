/**
 * The GroupStore contract's membership windows: who may read which gseqs of a group, across
 * joins, removals, re-joins at stale points and racing changes. Called by groupStoreContract.
 */
import { expect, it } from 'vitest';
import {
  BadRequestError,
  canReadGseq,
  groupKey,
  inboxKey,
  visibleRange,
  type GroupKey,
  type GroupRecord,
  type GroupStore,
} from '@seqline/core';
import { shuffled, uniqueTenant } from './harness.ts';

export const at = (time: number, gseq = 0): { time: number; gseq: number } => ({ time, gseq });

export function record(tenant: string, id: string): GroupRecord & { key: GroupKey } {
  return { key: groupKey(tenant, id), tenant, id, name: `group ${id} 群`, admin: 'alice', tier: 'small', memberCount: 3, createdAt: 1000 };
}

/** A group of `members` created at time 1000, gseq 0, in the store of `ctx`. */
export function createdIn(ctx: { readonly store: GroupStore }) {
  return async (members: string[], tenant = uniqueTenant(), id = 'g'): Promise<GroupRecord> => {
    const group = record(tenant, id);
    expect(await ctx.store.createGroup({ group, members, at: at(1000, 0) })).toBe(true);
    return group;
  };
}

export function groupWindowCases(ctx: { readonly store: GroupStore }): void {
  const created = createdIn(ctx);

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
    await expect(ctx.store.addMembers({ key: ok.key, users: ['bob'], at: { time: 1, gseq: 1.5 } })).rejects.toBeInstanceOf(BadRequestError);
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
}
