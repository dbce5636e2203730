/**
 * CQL-adapter behaviour the port contracts cannot see: failed writes that land anyway (late, or
 * without their marker) never surface, the writer's memory of a stream per term, the dedup
 * window, bucket markers, TTLs and long reads. Races between two processes: scylla-races.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, silentLogger, type Entry } from '@seqline/core';
import { dup, msgEntry, msgKey, uniqueTenant } from '@seqline/testing';
import { TIMELINE_TABLES, entryParams, type ScyllaStores } from '@seqline/store/scylla';
import { Cql, DEFAULT_CONSISTENCY, type Statement } from '../src/scylla/cql.ts';
import { CqlSeqLog } from '../src/scylla/seq-log.ts';
import { TEST_KEYSPACE, requireOrSkip, servicesAvailable, useTwoStoreSets } from './scylla-harness.ts';

const probe = await servicesAvailable();
const ks = TEST_KEYSPACE;
const seqs = (entries: Entry[]): number[] => entries.map((entry) => entry.seq);

if (requireOrSkip(probe, 'CQL adapter')) {
  describe('CQL adapter', () => {
    const { raw, ...sets } = useTwoStoreSets();
    let a: ScyllaStores;
    let b: ScyllaStores;
    beforeAll(() => {
      a = sets.a();
      b = sets.b();
    });

    /**
     * A write of an append that failed (its writer saw an error) and lands anyway — late, with
     * the timestamp it was sent with, or without its bucket's marker: entries and dedup rows.
     */
    async function landFailedWrite(inbox: string, entries: Entry[], options: { marker: boolean; timestampUs?: number }): Promise<void> {
      const using = options.timestampUs === undefined ? '' : ` USING TIMESTAMP ${options.timestampUs}`;
      for (const entry of entries) {
        const bucket = Math.floor(entry.seq / 65_536);
        if (options.marker)
          await raw.execute(`INSERT INTO ${ks}.inbox_buckets (inbox, bucket) VALUES (?, ?)`, [inbox, bucket], { prepare: true });
        await raw.batch(
          [
            {
              query: `INSERT INTO ${ks}.timeline (inbox, bucket, seq, doc) VALUES (?, ?, ?, ?)${using}`,
              params: [inbox, bucket, ...entryParams(entry)],
            },
            {
              query: `INSERT INTO ${ks}.timeline_appinfos (inbox, bucket, appinfo, seq) VALUES (?, ?, ?, ?)${using}`,
              params: [inbox, bucket, entry.appinfo, entry.seq],
            },
          ],
          { prepare: true },
        );
      }
    }

    async function rawSeqs(inbox: string, bucket: number): Promise<number[]> {
      const result = await raw.execute(`SELECT seq FROM ${ks}.timeline WHERE inbox = ? AND bucket = ?`, [inbox, bucket], { prepare: true });
      return result.rows.map((row) => Number(row.get('seq')));
    }

    const termed = (term: string) => Object.assign(() => undefined, { term });

    it('runs the write guard before every write round trip and stops at the first refusal', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(1, 'g1')] });
      let calls = 0;
      const countingGuard = () => {
        calls += 1;
      };
      await a.timeline.append({ inbox, entries: [msgEntry(2, 'g2')], guard: countingGuard });
      // Two writes: the entry with its dedup row, then its conversation index (conversation-writer.ts).
      expect(calls).toBe(2);
      // A writer deposed before its first write writes nothing.
      const deposed = () => {
        throw new Error('lease lost');
      };
      await expect(a.timeline.append({ inbox, entries: [msgEntry(3, 'g3')], guard: deposed })).rejects.toThrow('lease lost');
      // Deposed between preparing a far bucket and writing the entries: nothing shows.
      let n = 0;
      const lateLoss = () => {
        n += 1;
        if (n === 2) throw new Error('lease lost');
      };
      await expect(a.timeline.append({ inbox, entries: [msgEntry(70_000, 'g10')], guard: lateLoss })).rejects.toThrow('lease lost');
      expect(n).toBe(2);
      expect(seqs(await a.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([1, 2]);
      expect(await a.timeline.headSeq(inbox)).toBe(2);
      expect((await a.timeline.findSeqs({ inbox, keys: [msgKey('g3'), msgKey('g10')] })).size).toBe(0);
    });

    it('a failed write landing after the next append cleared its gap never surfaces', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(1, 'm1'), msgEntry(2, 'm2')] });
      const sentAt = (Date.now() - 1_000) * 1_000; // µs, before the clearing delete
      // A new writer (restart jump) appends above the burnt seqs; then the old write lands.
      expect(await b.timeline.append({ inbox, entries: [msgEntry(80_001, 'n1')], guard: termed('t2') })).toEqual([
        { seq: 80_001, duplicate: false },
      ]);
      await landFailedWrite(inbox, [msgEntry(3, 'lost'), msgEntry(4, 'lost-too')], { marker: true, timestampUs: sentAt });
      expect(seqs(await b.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([1, 2, 80_001]);
      expect(await rawSeqs(inbox, 0)).toEqual([1, 2]);
      expect(await b.timeline.getEntry({ inbox, seq: 3 })).toBeNull();
      // Its dedup row outlives the entry: it is never believed.
      expect((await b.timeline.findSeqs({ inbox, keys: [msgKey('lost')] })).size).toBe(0);
      expect(await b.timeline.append({ inbox, entries: [msgEntry(80_002, 'lost')], guard: termed('t2') })).toEqual([
        { seq: 80_002, duplicate: false },
      ]);
      // A writer loading the stream afresh does not believe it either.
      expect(await a.timeline.append({ inbox, entries: [msgEntry(90_000, 'lost-too')], guard: termed('t3') })).toEqual([
        { seq: 90_000, duplicate: false },
      ]);
      // 'lost' is indexed twice now (bucket 0: the dead row; bucket 1: the live copy).
      expect(await a.timeline.findSeqs({ inbox, keys: [msgKey('lost')] })).toEqual(new Map([[msgKey('lost'), 80_002]]));
      expect(await b.timeline.append({ inbox, entries: [msgEntry(90_001, 'lost')], guard: termed('t4') })).toEqual([
        dup(msgEntry(80_002, 'lost')),
      ]);
      const all = await a.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 });
      expect(seqs(all)).toEqual([1, 2, 80_001, 80_002, 90_000]);
    });

    it('a failed write that landed without its marker stays invisible and is cleared', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(65_535, 'last-of-0')] });
      await landFailedWrite(inbox, [msgEntry(65_536, 'lost')], { marker: false });
      expect(seqs(await a.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([65_535]);
      expect(await b.timeline.headSeq(inbox)).toBe(65_535);
      expect((await b.timeline.findSeqs({ inbox, keys: [msgKey('lost')] })).size).toBe(0);
      expect(await b.timeline.append({ inbox, entries: [msgEntry(65_540, 'lost')], guard: termed('t2') })).toEqual([
        { seq: 65_540, duplicate: false },
      ]);
      expect(seqs(await a.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([65_535, 65_540]);
      expect(await rawSeqs(inbox, 1)).toEqual([65_540]);
      expect(await a.timeline.findSeqs({ inbox, keys: [msgKey('lost')] })).toEqual(new Map([[msgKey('lost'), 65_540]]));
    });

    it('a write that landed although its writer saw a failure is what a resend finds', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(1, 'm1')] });
      await landFailedWrite(inbox, [msgEntry(2, 'r2'), msgEntry(3, 'r3')], { marker: true });
      expect(
        await b.timeline.append({ inbox, entries: [msgEntry(4, 'r2'), msgEntry(5, 'r3'), msgEntry(6, 'r4')], guard: termed('t2') }),
      ).toEqual([dup(msgEntry(2, 'r2')), dup(msgEntry(3, 'r3')), { seq: 6, duplicate: false }]);
      expect(seqs(await a.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([1, 2, 3, 6]);
    });

    it("the head is the last non-empty bucket's highest entry (an empty marked bucket is skipped)", async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(5, 'x5'), msgEntry(10, 'x10')] });
      // A far append's marker went first, then the append failed.
      await raw.execute(`INSERT INTO ${ks}.inbox_buckets (inbox, bucket) VALUES (?, 3)`, [inbox], { prepare: true });
      expect(await b.timeline.headSeq(inbox)).toBe(10);
      expect(await b.timeline.append({ inbox, entries: [msgEntry(11, 'x11'), msgEntry(12, 'x5')], guard: termed('t2') })).toEqual([
        { seq: 11, duplicate: false },
        dup(msgEntry(5, 'x5')),
      ]);
      expect(seqs(await b.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([5, 10, 11]);
    });

    it('a writer trusts what it remembers of a stream only within its term', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(1, 'm1')], guard: termed('shard-1@1') });
      // Another process takes the shard over and appends.
      await b.timeline.append({ inbox, entries: [msgEntry(100, 'm100')], guard: termed('shard-1@2') });
      // The first process gets the shard back under a new epoch: it reloads, so it sees 'm100'.
      expect(
        await a.timeline.append({ inbox, entries: [msgEntry(200, 'm100'), msgEntry(201, 'm201')], guard: termed('shard-1@3') }),
      ).toEqual([dup(msgEntry(100, 'm100')), { seq: 201, duplicate: false }]);
      expect(seqs(await a.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([1, 100, 201]);
    });

    it('resends are deduped across non-empty buckets a jump left apart, by a warm and by a cold writer', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(1, 'b0')] });
      await a.timeline.append({ inbox, entries: [msgEntry(500_000, 'b7')] }); // a jump: bucket 7 follows bucket 0
      expect(await a.timeline.append({ inbox, entries: [msgEntry(500_001, 'b0')] })).toEqual([dup(msgEntry(1, 'b0'))]);
      expect(await b.timeline.append({ inbox, entries: [msgEntry(500_002, 'b0'), msgEntry(500_003, 'b7')], guard: termed('t2') })).toEqual([
        dup(msgEntry(1, 'b0')),
        dup(msgEntry(500_000, 'b7')),
      ]);
    });

    /** Counts the SELECTs `stores` sends from now on (its driver client's execute calls). */
    function countReads(stores: ScyllaStores): { count: () => number; stop: () => void } {
      const client = stores.client;
      const execute = client.execute.bind(client);
      let reads = 0;
      client.execute = ((query: string, ...rest: unknown[]) => {
        // Reads of the inbox's own tables: the conversation index reads its records after the append.
        if (/^\s*SELECT\s.*\sFROM\s+\w+\.(timeline|timeline_appinfos|inbox_buckets)\s/is.test(query)) reads++;
        return (execute as (...args: unknown[]) => unknown)(query, ...rest);
      }) as typeof client.execute;
      return {
        count: () => reads,
        stop: () => {
          client.execute = execute;
        },
      };
    }

    it('a stream with a long history dedups from memory: a new appinfo costs no read, an old resend is found', async () => {
      const inbox = inboxKey(uniqueTenant(), 'busy');
      // More dedup rows than one page of the cold writer's window load (5 000).
      for (let from = 1; from <= 5_500; from += 500) {
        await a.timeline.append({ inbox, entries: Array.from({ length: 500 }, (_, i) => msgEntry(from + i, `w${from + i}`)) });
      }
      const reads = countReads(a);
      try {
        expect(await a.timeline.append({ inbox, entries: [msgEntry(5_501, 'w5501')] })).toEqual([{ seq: 5_501, duplicate: false }]);
        expect(reads.count()).toBe(0);
        expect(await a.timeline.append({ inbox, entries: [msgEntry(5_502, 'w7'), msgEntry(5_503, 'w5503')] })).toEqual([
          dup(msgEntry(7, 'w7')),
          { seq: 5_503, duplicate: false },
        ]);
        expect(reads.count()).toBeGreaterThan(0); // the resend's candidate was confirmed by the store
      } finally {
        reads.stop();
      }
      // A cold writer loads every page of the window.
      expect(
        await b.timeline.append({
          inbox,
          entries: [msgEntry(5_504, 'w5499'), msgEntry(5_505, 'w2'), msgEntry(5_506, 'w5506')],
          guard: termed('t2'),
        }),
      ).toEqual([dup(msgEntry(5_499, 'w5499')), dup(msgEntry(2, 'w2')), { seq: 5_506, duplicate: false }]);
    }, 60_000);

    it('keeps one marker per non-empty bucket; entries and their dedup rows expire after 180 days', async () => {
      const inbox = inboxKey(uniqueTenant(), 'alice');
      await a.timeline.append({ inbox, entries: [msgEntry(1, 'b0'), msgEntry(65_535, 'b0-last')] });
      await a.timeline.append({ inbox, entries: [msgEntry(65_536, 'b1'), msgEntry(50_000_000, 'b762')] });
      const markers = await raw.execute(`SELECT bucket FROM ${ks}.inbox_buckets WHERE inbox = ?`, [inbox], { prepare: true });
      expect(markers.rows.map((row) => Number(row.get('bucket')))).toEqual([0, 1, 762]);
      expect(seqs(await a.timeline.readBefore({ inbox, beforeSeq: 50_000_000, limit: 2 }))).toEqual([65_536, 65_535]);
      const ttl = await raw.execute(`SELECT TTL(doc) AS t FROM ${ks}.timeline WHERE inbox = ? AND bucket = 0 AND seq = 1`, [inbox], {
        prepare: true,
      });
      expect(Number(ttl.first()?.get('t'))).toBeGreaterThan(15_552_000 - 600);
      const dedupTtl = await raw.execute(
        `SELECT TTL(seq) AS t FROM ${ks}.timeline_appinfos WHERE inbox = ? AND bucket = 762 AND appinfo = ?`,
        [inbox, msgKey('b762')],
        { prepare: true },
      );
      expect(Number(dedupTtl.first()?.get('t'))).toBeGreaterThan(15_552_000 - 600);
    });

    it('a stream appended without pause still re-writes its bucket marker every refresh period', async () => {
      // The marker's TTL (181 days) outlives the entries written in one refresh period, not a
      // stream's whole busy life: the writer must not take its own appends for marker writes.
      const cql = new Cql(raw, ks, DEFAULT_CONSISTENCY);
      const batch = cql.batch.bind(cql);
      let markerWrites = 0;
      cql.batch = (statements: Statement[], ...rest) => {
        markerWrites += statements.filter((st) => st.query.includes('inbox_buckets')).length;
        return batch(statements, ...rest);
      };
      const log = new CqlSeqLog(cql, TIMELINE_TABLES, silentLogger, { markerRefreshMs: 150 });
      const inbox = inboxKey(uniqueTenant(), 'busy');
      const started = Date.now();
      for (let seq = 1; Date.now() - started < 700; seq++) {
        await log.append(inbox, [msgEntry(seq, `m${seq}`)]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(markerWrites).toBeGreaterThanOrEqual(4); // at 0 ms, then every ≥ 150 ms
      expect(markerWrites).toBeLessThanOrEqual(6);
    });

    it('reads longer than one driver page come back whole', async () => {
      const inbox = inboxKey(uniqueTenant(), 'big');
      for (let from = 1; from <= 6_000; from += 500) {
        await a.timeline.append({ inbox, entries: Array.from({ length: 500 }, (_, i) => msgEntry(from + i, `p${from + i}`)) });
      }
      const forward = await b.timeline.readAfter({ inbox, afterSeq: 0, limit: 10_000 });
      expect(seqs(forward)).toEqual(Array.from({ length: 6_000 }, (_, i) => i + 1));
      const backward = await b.timeline.readBefore({ inbox, beforeSeq: 6_001, limit: 5_500 });
      expect(seqs(backward)).toEqual(Array.from({ length: 5_500 }, (_, i) => 6_000 - i));
    }, 60_000);
  });
}
