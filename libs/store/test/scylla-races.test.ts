/**
 * CQL-adapter races the port contracts cannot see: two processes (two driver clients) appending,
 * adding members and claiming sections at once, and job listings against stale index rows.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { groupKey, inboxKey } from '@seqline/core';
import { msgEntry, uniqueName, uniqueTenant } from '@seqline/testing';
import type { ScyllaStores } from '@seqline/store/scylla';
import { TEST_KEYSPACE, requireOrSkip, servicesAvailable, useTwoStoreSets } from './scylla-harness.ts';

const probe = await servicesAvailable();
const ks = TEST_KEYSPACE;

if (requireOrSkip(probe, 'CQL adapter races')) {
  describe('CQL adapter races', () => {
    const { raw, ...sets } = useTwoStoreSets();
    let a: ScyllaStores;
    let b: ScyllaStores;
    beforeAll(() => {
      a = sets.a();
      b = sets.b();
    });

    it('appends racing on one inbox inside one process store an appinfo once', async () => {
      const inbox = inboxKey(uniqueTenant(), 'race');
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => a.timeline.append({ inbox, entries: [msgEntry(i + 1, 'same')] })),
      );
      expect(outcomes.flat().filter((outcome) => !outcome.duplicate)).toEqual([{ seq: 1, duplicate: false }]);
      expect(await a.timeline.readAfter({ inbox, afterSeq: 0, limit: 100 })).toHaveLength(1);
    });

    it('two processes racing to add the same member open exactly one window', async () => {
      const tenant = uniqueTenant();
      const key = groupKey(tenant, 'g');
      const record = { key, tenant, id: 'g', name: 'g', admin: 'alice', tier: 'small' as const, memberCount: 1, createdAt: 1 };
      const creates = await Promise.all(
        [a, b, a, b].map((stores) => stores.groups.createGroup({ group: record, members: ['alice'], at: { time: 1, gseq: 0 } })),
      );
      expect(creates.filter(Boolean)).toHaveLength(1);
      const adds = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          (i % 2 === 0 ? a : b).groups.addMembers({ key, users: ['bob', 'carol'], at: { time: 2 + i, gseq: i } }),
        ),
      );
      expect(adds.flat().sort()).toEqual(['bob', 'carol']);
      expect((await a.groups.getMembership({ key, user: 'bob' }))?.windows).toHaveLength(1);
      expect(await b.groups.listMembers(key)).toEqual(['alice', 'bob', 'carol']);
    });

    it('two processes racing to rename a group: one revision each, the record ends on the highest', async () => {
      const tenant = uniqueTenant();
      const key = groupKey(tenant, 'g');
      const record = { key, tenant, id: 'g', name: 'g', admin: 'alice', tier: 'small' as const, memberCount: 1, createdAt: 1 };
      expect(await a.groups.createGroup({ group: record, members: ['alice'], at: { time: 1, gseq: 0 } })).toBe(true);
      const names = Array.from({ length: 10 }, (_, i) => `name-${i}`);
      const revs = await Promise.all(names.map((name, i) => (i % 2 === 0 ? a : b).groups.renameGroup({ key, name })));
      expect(revs.map((r) => r.nameRev).sort((x, y) => x - y)).toEqual(names.map((_, i) => i + 1));
      const top = names[revs.findIndex((r) => r.nameRev === names.length)];
      expect(await b.groups.getGroup(key)).toMatchObject({ name: top, nameRev: names.length, admin: 'alice' });
    });

    it('two processes racing for a section: exactly the highest epoch owns it', async () => {
      const section = uniqueName('section');
      const epochs = Array.from({ length: 12 }, (_, i) => i + 1);
      await Promise.allSettled(epochs.map((epoch) => (epoch % 2 === 0 ? a : b).ceilings.claim({ section, epoch })));
      await expect(a.ceilings.raise({ section, ceiling: 10, epoch: 11 })).rejects.toThrow(/owned by epoch 12/);
      await b.ceilings.raise({ section, ceiling: 10, epoch: 12 });
      expect(await a.ceilings.claim({ section, epoch: 12 })).toBe(10);
      const scope = uniqueName('scope');
      const drawn = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).ceilings.nextEpoch(scope)));
      expect(new Set(drawn).size).toBe(20);
    });

    it('job listings skip index rows whose job is gone or changed', async () => {
      const queue = uniqueName('queue');
      const id = uniqueName('job');
      await raw.execute(`INSERT INTO ${ks}.job_order (scope, created_at, id) VALUES (?, 5, ?)`, [`queue:${queue}`, `${id}-ghost`], {
        prepare: true,
      });
      const job = { id, queue, payload: { n: 1 }, attempts: 0, notBefore: 0, createdAt: 10 };
      expect(await a.jobs.put(job)).toBe(true);
      await raw.execute(`INSERT INTO ${ks}.job_order (scope, created_at, id) VALUES (?, 3, ?)`, [`queue:${queue}`, id], { prepare: true });
      expect(await b.jobs.list({ queue })).toEqual([job]);
      await b.jobs.update({ ...job, queue: `${queue}-2`, createdAt: 10 });
      expect(await a.jobs.list({ queue })).toEqual([]);
      expect((await a.jobs.list({})).filter((j) => j.id === id)).toEqual([{ ...job, queue: `${queue}-2` }]);
    });
  });
}
