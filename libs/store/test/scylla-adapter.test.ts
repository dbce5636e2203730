/**
 * CQL-adapter behaviour the port contracts cannot see: the head as commit point (leftovers of a
 * crashed append stay invisible and are cleared), highest-head-wins whatever the write order,
 * bucket markers, TTLs, and races between two processes (two driver clients).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKey, inboxKey, type Entry } from '@seqline/core';
import { msgEntry, uniqueName, uniqueTenant } from '@seqline/testing';
import { migrateSchema, type ScyllaStores } from '@seqline/store';
import { TEST_KEYSPACE, newClient, openTestStores, requireOrSkip, servicesAvailable } from './scylla-harness.ts';

const probe = await servicesAvailable();
const ks = TEST_KEYSPACE;
const seqs = (entries: Entry[]): number[] => entries.map((entry) => entry.seq);

if (requireOrSkip(probe, 'CQL adapter')) {
  describe('CQL adapter', () => {
    const raw = newClient();
    let a: ScyllaStores;
    let b: ScyllaStores;
    beforeAll(async () => {
      await migrateSchema(raw, { keyspace: ks });
      [a, b] = await Promise.all([openTestStores(), openTestStores()]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([a.close(), b.close()]);
      await raw.shutdown();
    });

    /**
     * What a writer that crashed after writing entries and before its commit leaves behind: the
     * entries, and markers for their buckets beyond the one right after the head.
     */
    async function leaveCrashedAppend(inbox: string, head: number, entries: Entry[]): Promise<void> {
      for (const entry of entries) {
        const bucket = Math.floor(entry.seq / 65_536);
        if (bucket > Math.floor((head + 1) / 65_536)) {
          await raw.execute(`INSERT INTO ${ks}.inbox_buckets (inbox, bucket) VALUES (?, ?)`, [inbox, bucket], { prepare: true });
        }
        await raw.execute(
          `INSERT INTO ${ks}.timeline (inbox, bucket, seq, kind, appinfo, conv_type, conv_id, sender, send_time) VALUES (?, ?, ?, 'msg', ?, 'user', 'bob', 'bob', 1)`,
          [inbox, bucket, entry.seq, entry.appinfo], { prepare: true },
        );
      }
    }

    async function rawSeqs(inbox: string, bucket: number): Promise<number[]> {
      const result = await raw.execute(`SELECT seq FROM ${ks}.timeline WHERE inbox = ? AND bucket = ?`, [inbox, bucket], { prepare: true });
      return result.rows.map((row) => Number(row.get('seq')));
    }

    it('runs the write guard before every write round trip and stops at the first refusal', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append(inbox, [msgEntry(1, 'g1')]);
      let calls = 0;
      const countingGuard = () => { calls += 1; };
      await a.timeline.append(inbox, [msgEntry(2, 'g2')], countingGuard);
      expect(calls).toBeGreaterThanOrEqual(2); // entries, then the commit
      // A writer deposed before its first write writes nothing.
      const deposed = () => { throw new Error('lease lost'); };
      await expect(a.timeline.append(inbox, [msgEntry(3, 'g3')], deposed)).rejects.toThrow('lease lost');
      // Deposed between the entries and the commit: the entries stay invisible leftovers.
      let n = 0;
      const lateLoss = () => { n += 1; if (n === 2) throw new Error('lease lost'); };
      await expect(a.timeline.append(inbox, [msgEntry(4, 'g4')], lateLoss)).rejects.toThrow('lease lost');
      expect(seqs(await a.timeline.readAfter(inbox, 0, 10))).toEqual([1, 2]);
      expect(await a.timeline.headSeq(inbox)).toBe(2);
      expect((await a.timeline.findSeqs(inbox, ['g3', 'g4'])).size).toBe(0);
    });

    it('entries above the head (a crashed append) are invisible and cleared by the next append', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append(inbox, [msgEntry(1, 'm1'), msgEntry(2, 'm2')]);
      // Burnt seqs 3..4 in the head's bucket and 70 000 in a bucket of its own.
      await leaveCrashedAppend(inbox, 2, [msgEntry(3, 'lost'), msgEntry(4, 'm4'), msgEntry(70_000, 'far')]);
      expect(seqs(await a.timeline.readAfter(inbox, 0, 10))).toEqual([1, 2]);
      expect(seqs(await a.timeline.readBefore(inbox, 100_000, 10))).toEqual([2, 1]);
      expect(await a.timeline.getEntry(inbox, 3)).toBeNull();
      expect(await a.timeline.headSeq(inbox)).toBe(2);
      expect((await a.timeline.findSeqs(inbox, ['lost'])).size).toBe(0);
      await expect(a.timeline.addReaders(inbox, 3, ['bob'])).rejects.toThrow();

      // The writer resends 'lost' with a fresh seq after a restart jump.
      expect(await b.timeline.append(inbox, [msgEntry(80_001, 'lost')])).toEqual([{ seq: 80_001, duplicate: false }]);
      const all = await b.timeline.readAfter(inbox, 0, 10);
      expect(seqs(all)).toEqual([1, 2, 80_001]);
      expect(all.filter((entry) => entry.appinfo === 'lost')).toHaveLength(1);
      expect(await rawSeqs(inbox, 0)).toEqual([1, 2]);
      expect(await rawSeqs(inbox, 1)).toEqual([80_001]);
    });

    it('a retried call over its own leftovers stores each entry once', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append(inbox, [msgEntry(1, 'm1')]);
      await leaveCrashedAppend(inbox, 1, [msgEntry(2, 'r2'), msgEntry(3, 'r3')]);
      expect(await a.timeline.append(inbox, [msgEntry(2, 'r2'), msgEntry(3, 'r3')])).toEqual([
        { seq: 2, duplicate: false }, { seq: 3, duplicate: false },
      ]);
      expect(seqs(await a.timeline.readAfter(inbox, 0, 10))).toEqual([1, 2, 3]);
    });

    it('the highest head wins whatever order the head writes land in', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append(inbox, [msgEntry(5, 'x5'), msgEntry(10, 'x10')]);
      const written = await raw.execute(`SELECT WRITETIME(seq) AS ts FROM ${ks}.appinfo_index WHERE inbox = ? AND appinfo = ''`, [inbox], { prepare: true });
      expect(Number(written.first()?.get('ts'))).toBe(10);
      // A late head write of a writer that read an older head (a deposed owner, a retry) carries
      // its own, lower head as timestamp, so it loses even though it lands last.
      await raw.execute(`INSERT INTO ${ks}.appinfo_index (inbox, appinfo, seq) VALUES (?, '', 7) USING TTL 0 AND TIMESTAMP 7`, [inbox], { prepare: true });
      expect(await b.timeline.headSeq(inbox)).toBe(10);
      expect(seqs(await b.timeline.readAfter(inbox, 0, 10))).toEqual([5, 10]);
    });

    it('keeps one marker per non-empty bucket; entries expire after 180 days, the head never', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append(inbox, [msgEntry(1, 'b0'), msgEntry(65_535, 'b0-last')]);
      await a.timeline.append(inbox, [msgEntry(65_536, 'b1'), msgEntry(50_000_000, 'b762')]);
      const markers = await raw.execute(`SELECT bucket FROM ${ks}.inbox_buckets WHERE inbox = ?`, [inbox], { prepare: true });
      expect(markers.rows.map((row) => Number(row.get('bucket')))).toEqual([0, 1, 762]);
      expect(seqs(await a.timeline.readBefore(inbox, 50_000_000, 2))).toEqual([65_536, 65_535]);
      const ttl = await raw.execute(`SELECT TTL(kind) AS t FROM ${ks}.timeline WHERE inbox = ? AND bucket = 0 AND seq = 1`, [inbox], { prepare: true });
      expect(Number(ttl.first()?.get('t'))).toBeGreaterThan(15_552_000 - 600);
      const headTtl = await raw.execute(`SELECT TTL(seq) AS t FROM ${ks}.appinfo_index WHERE inbox = ? AND appinfo = ''`, [inbox], { prepare: true });
      expect(headTtl.first()?.get('t')).toBeNull();
    });

    it('reads longer than one driver page come back whole', async () => {
      const inbox = inboxKey(uniqueTenant(), 'big');
      for (let from = 1; from <= 6_000; from += 500) {
        await a.timeline.append(inbox, Array.from({ length: 500 }, (_, i) => msgEntry(from + i, `p${from + i}`)));
      }
      const forward = await b.timeline.readAfter(inbox, 0, 10_000);
      expect(seqs(forward)).toEqual(Array.from({ length: 6_000 }, (_, i) => i + 1));
      const backward = await b.timeline.readBefore(inbox, 6_001, 5_500);
      expect(seqs(backward)).toEqual(Array.from({ length: 5_500 }, (_, i) => 6_000 - i));
    }, 60_000);

    it('appends racing on one inbox inside one process store an appinfo once', async () => {
      const inbox = inboxKey(uniqueTenant(), 'race');
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => a.timeline.append(inbox, [msgEntry(i + 1, 'same')])));
      expect(outcomes.flat().filter((outcome) => !outcome.duplicate)).toEqual([{ seq: 1, duplicate: false }]);
      expect(await a.timeline.readAfter(inbox, 0, 100)).toHaveLength(1);
    });

    it('two processes racing to add the same member open exactly one window', async () => {
      const tenant = uniqueTenant();
      const key = groupKey(tenant, 'g');
      const record = { key, tenant, id: 'g', name: 'g', admin: 'alice', tier: 'small' as const, memberCount: 1, createdAt: 1 };
      const creates = await Promise.all([a, b, a, b].map((stores) => stores.groups.createGroup(record, ['alice'], { time: 1, gseq: 0 })));
      expect(creates.filter(Boolean)).toHaveLength(1);
      const adds = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).groups.addMembers(key, ['bob', 'carol'], { time: 2 + i, gseq: i })));
      expect(adds.flat().sort()).toEqual(['bob', 'carol']);
      expect((await a.groups.getMembership(key, 'bob'))?.windows).toHaveLength(1);
      expect(await b.groups.listMembers(key)).toEqual(['alice', 'bob', 'carol']);
    });

    it('two processes racing for a section: exactly the highest epoch owns it', async () => {
      const section = uniqueName('section');
      const epochs = Array.from({ length: 12 }, (_, i) => i + 1);
      await Promise.allSettled(epochs.map((epoch) => (epoch % 2 === 0 ? a : b).ceilings.claim(section, epoch)));
      await expect(a.ceilings.raise(section, 10, 11)).rejects.toThrow(/owned by epoch 12/);
      await b.ceilings.raise(section, 10, 12);
      expect(await a.ceilings.claim(section, 12)).toBe(10);
      const scope = uniqueName('scope');
      const drawn = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).ceilings.nextEpoch(scope)));
      expect(new Set(drawn).size).toBe(20);
    });

    it('job listings skip index rows whose job is gone or changed', async () => {
      const queue = uniqueName('queue');
      const id = uniqueName('job');
      await raw.execute(`INSERT INTO ${ks}.job_order (scope, created_at, id) VALUES (?, 5, ?)`, [`queue:${queue}`, `${id}-ghost`], { prepare: true });
      const job = { id, queue, payload: { n: 1 }, attempts: 0, notBefore: 0, createdAt: 10 };
      expect(await a.jobs.put(job)).toBe(true);
      await raw.execute(`INSERT INTO ${ks}.job_order (scope, created_at, id) VALUES (?, 3, ?)`, [`queue:${queue}`, id], { prepare: true });
      expect(await b.jobs.list(queue)).toEqual([job]);
      await b.jobs.update({ ...job, queue: `${queue}-2`, createdAt: 10 });
      expect(await a.jobs.list(queue)).toEqual([]);
      expect((await a.jobs.list()).filter((j) => j.id === id)).toEqual([{ ...job, queue: `${queue}-2` }]);
    });
  });
}
