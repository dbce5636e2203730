/**
 * Faults injected between the CQL adapter and a real cluster: an append whose write fails or
 * whose answer is lost, and lightweight transactions that land but whose answer is lost (a client timeout).
 * The adapter must neither expose half an append nor misreport an LWT it did apply.
 */
import { errors, type Client } from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, DEFAULT_TIER_THRESHOLDS, groupKey, inboxKey } from '@seqline/core';
import { dup, msgEntry, msgKey, uniqueName, uniqueTenant } from '@seqline/testing';
import { migrateSchema, type ScyllaStores } from '@seqline/store/scylla';
import { newClient, openTestStores, requireOrSkip, servicesAvailable, TEST_KEYSPACE } from './scylla-harness.ts';

const probe = await servicesAvailable();

type Fault = (query: string) => 'fail-before' | 'lose-answer' | undefined;

/** What the caller sees of an injected timeout: OVERLOADED (retry), the driver's error as its cause. */
const injectedTimeout = { code: 'OVERLOADED', cause: expect.objectContaining({ message: expect.stringMatching(/injected/) }) };

/** Wraps the client's execute/batch: a statement matching `fault` fails before being sent, or is sent and its answer replaced by a timeout. */
function injectFaults(client: Client, fault: Fault): { restore(): void; readonly hits: number } {
  const execute = client.execute.bind(client);
  const batch = client.batch.bind(client);
  const timeout = (): Error => new errors.OperationTimedOutError('injected: answer lost', '127.0.0.1:9042');
  let hits = 0;
  const decide = (queries: string[]): ReturnType<Fault> => {
    const what = queries.map(fault).find((f) => f !== undefined);
    if (what !== undefined) hits++;
    return what;
  };
  Object.assign(client, {
    execute: async (query: string, params?: unknown, options?: unknown) => {
      const what = decide([query]);
      if (what === 'fail-before') throw timeout();
      const result = await (execute as (q: string, p?: unknown, o?: unknown) => Promise<unknown>)(query, params, options);
      if (what === 'lose-answer') throw timeout();
      return result;
    },
    batch: async (queries: Array<{ query: string }>, options?: unknown) => {
      const what = decide(queries.map((q) => q.query));
      if (what === 'fail-before') throw timeout();
      const result = await (batch as (q: unknown, o?: unknown) => Promise<unknown>)(queries, options);
      if (what === 'lose-answer') throw timeout();
      return result;
    },
  });
  return {
    restore: () => Object.assign(client, { execute, batch }),
    get hits() {
      return hits;
    },
  };
}

if (requireOrSkip(probe, 'CQL adapter faults')) {
  describe('CQL adapter under injected faults', () => {
    let stores: ScyllaStores;
    beforeAll(async () => {
      const raw = newClient();
      await migrateSchema(raw, { keyspace: TEST_KEYSPACE }).finally(() => raw.shutdown());
      stores = await openTestStores();
    }, 120_000);
    afterAll(() => stores.close());

    it('an append whose write never reached the cluster shows nothing; the resend lands once', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await stores.timeline.append({ inbox, entries: [msgEntry(1, 'm1')] });
      const faults = injectFaults(stores.client, (q) => (q.includes('.timeline (') ? 'fail-before' : undefined));
      try {
        await expect(stores.timeline.append({ inbox, entries: [msgEntry(2, 'lost'), msgEntry(3, 'lost-too')] })).rejects.toMatchObject(
          injectedTimeout,
        );
      } finally {
        faults.restore();
      }
      expect(faults.hits).toBe(1);
      expect((await stores.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 })).map((e) => e.seq)).toEqual([1]);
      expect(await stores.timeline.headSeq(inbox)).toBe(1);
      expect(await stores.timeline.findSeqs({ inbox, keys: [msgKey('lost')] })).toEqual(new Map());
      // The writer burnt seqs 2..3; the client resends 'lost' and it gets 4.
      expect(await stores.timeline.append({ inbox, entries: [msgEntry(4, 'lost')] })).toEqual([{ seq: 4, duplicate: false }]);
      expect((await stores.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 })).map((e) => [e.seq, e.appinfo])).toEqual([
        [1, 'm1'],
        [4, 'lost'],
      ]);
      await stores.timeline.append({ inbox, entries: [msgEntry(5, 'm5')] });
      expect((await stores.timeline.readBefore({ inbox, beforeSeq: 100, limit: 10 })).map((e) => e.seq)).toEqual([5, 4, 1]);
    });

    it('an append whose answer was lost (it landed) is what its resend finds, once', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await stores.timeline.append({ inbox, entries: [msgEntry(1, 'm1')] });
      const faults = injectFaults(stores.client, (q) => (q.includes('.timeline (') ? 'lose-answer' : undefined));
      try {
        await expect(stores.timeline.append({ inbox, entries: [msgEntry(2, 'landed')] })).rejects.toMatchObject(injectedTimeout);
      } finally {
        faults.restore();
      }
      // The writer forgot what it knew of the inbox, so it reloads and finds the landed copy.
      expect(await stores.timeline.append({ inbox, entries: [msgEntry(3, 'landed'), msgEntry(4, 'm4')] })).toEqual([
        dup(msgEntry(2, 'landed')),
        { seq: 4, duplicate: false },
      ]);
      expect((await stores.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 })).map((e) => [e.seq, e.appinfo])).toEqual([
        [1, 'm1'],
        [2, 'landed'],
        [4, 'm4'],
      ]);
    });

    it('a group create whose answer was lost still reports success, once', async () => {
      const tenant = uniqueTenant();
      const key = groupKey(tenant, 'g');
      const record = { key, tenant, id: 'g', name: 'g', admin: 'alice', tier: 'small' as const, memberCount: 2, createdAt: 1 };
      const faults = injectFaults(stores.client, (q) => (q.includes('.groups (grp, tenant') ? 'lose-answer' : undefined));
      try {
        expect(await stores.groups.createGroup({ group: record, members: ['alice', 'bob'], at: { time: 1, gseq: 0 } })).toBe(true);
        expect(await stores.groups.createGroup({ group: record, members: ['carol'], at: { time: 2, gseq: 0 } })).toBe(false);
      } finally {
        faults.restore();
      }
      expect(faults.hits).toBe(1); // the second create is refused by a plain read, no LWT
      expect(await stores.groups.listMembers(key)).toEqual(['alice', 'bob']);
    });

    it('a membership change whose answer was lost is reported as made', async () => {
      const tenant = uniqueTenant();
      const key = groupKey(tenant, 'g');
      await stores.groups.createGroup({
        group: { key, tenant, id: 'g', name: 'g', admin: 'a', tier: 'small', memberCount: 1, createdAt: 1 },
        members: ['a'],
        at: {
          time: 1,
          gseq: 0,
        },
      });
      const faults = injectFaults(stores.client, (q) =>
        q.includes('IF op = ?') || q.includes('member, windows, is_member, op) VALUES (?, ?, ?, ?, ?) IF NOT EXISTS')
          ? 'lose-answer'
          : undefined,
      );
      try {
        expect(await stores.groups.addMembers({ key, users: ['b', 'c'], at: { time: 2, gseq: 1 } })).toEqual(['b', 'c']);
        expect(await stores.groups.removeMembers({ key, users: ['a'], at: { time: 3, gseq: 2 } })).toEqual(['a']);
      } finally {
        faults.restore();
      }
      expect(faults.hits).toBe(2);
      expect(await stores.groups.listMembers(key)).toEqual(['b', 'c']);
      expect((await stores.groups.getMembership({ key, user: 'b' }))?.windows).toEqual([{ joinedAt: 2, fromGseq: 1 }]);
    });

    it('epochs, ceilings, jobs and settings recover from lost LWT answers', async () => {
      const scope = uniqueName('scope');
      const section = uniqueName('section');
      const job = { id: uniqueName('job'), queue: uniqueName('queue'), payload: { x: 1 }, attempts: 0, notBefore: 0, createdAt: 5 };
      const settingsStores = await openTestStores({ settingsName: uniqueName('settings') });
      const faults = injectFaults(stores.client, (q) => (/ IF /.test(q) && !q.startsWith('SELECT') ? 'lose-answer' : undefined));
      const settingsFaults = injectFaults(settingsStores.client, (q) => (/ IF /.test(q) ? 'lose-answer' : undefined));
      try {
        const epochs = [await stores.ceilings.nextEpoch(scope), await stores.ceilings.nextEpoch(scope)];
        expect(epochs[1]).toBeGreaterThan(epochs[0] ?? Infinity);
        expect(await stores.ceilings.claim({ section, epoch: 3 })).toBe(0);
        await stores.ceilings.raise({ section, ceiling: 10_000, epoch: 3 });
        expect(await stores.jobs.put(job)).toBe(true);
        expect(await stores.jobs.put(job)).toBe(false);
        const base = { tiers: { ...DEFAULT_TIER_THRESHOLDS }, limits: { ...DEFAULT_LIMITS }, hooks: {} };
        expect(await settingsStores.settings.save({ settings: base, expectedVersion: 0 })).toEqual({ ...base, version: 1 });
        expect(await settingsStores.settings.save({ settings: base, expectedVersion: 0 })).toBe(false);
      } finally {
        faults.restore();
        settingsFaults.restore();
        await settingsStores.close();
      }
      expect(faults.hits).toBeGreaterThanOrEqual(6); // 2 epochs, claim, raise, 2 puts
      expect(settingsFaults.hits).toBe(2);
      expect(await stores.ceilings.claim({ section, epoch: 3 })).toBe(10_000);
      await expect(stores.ceilings.raise({ section, ceiling: 1, epoch: 2 })).rejects.toThrow(/owned by epoch 3/);
      expect(await stores.jobs.list({ queue: job.queue })).toEqual([job]);
    });
  });
}
