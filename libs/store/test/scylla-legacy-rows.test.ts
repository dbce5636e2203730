/** Rows written by older schema versions still read back whole and dedup (the CQL adapter reads every shape). */
import { beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, type Entry } from '@seqline/core';
import { msgEntry, uniqueTenant } from '@seqline/testing';
import type { ScyllaStores } from '@seqline/store/scylla';
import { TEST_KEYSPACE, requireOrSkip, servicesAvailable, useTwoStoreSets } from './scylla-harness.ts';

const probe = await servicesAvailable();
const ks = TEST_KEYSPACE;

if (requireOrSkip(probe, 'CQL adapter, rows of older schema versions')) {
  describe('CQL adapter, rows of older schema versions', () => {
    const { raw, ...sets } = useTwoStoreSets();
    let a: ScyllaStores;
    let b: ScyllaStores;
    beforeAll(() => { a = sets.a(); b = sets.b(); });

    it('a row written before schema version 3 (typed columns, no doc) reads back whole and dedups', async () => {
      const inbox = inboxKey(uniqueTenant(), 'legacy');
      await raw.batch([
        { query: `INSERT INTO ${ks}.inbox_buckets (inbox, bucket) VALUES (?, 0)`, params: [inbox] },
        {
          query: `INSERT INTO ${ks}.timeline (inbox, bucket, seq, kind, appinfo, conv_type, conv_id, sender, send_time, type, body, refer_seq, seqs, read_by, recall_appinfo, recall_send_time)
                  VALUES (?, 0, 7, 'receipt', 'old-7', 'group', 'g1', 'bob', 1700000000000, 'text', '{"text":"hi"}', 3, [3, 4], ['bob'], 'm-1', 1699999999000)`,
          params: [inbox],
        },
        { query: `INSERT INTO ${ks}.timeline_appinfos (inbox, bucket, appinfo, seq) VALUES (?, 0, 'old-7', 7)`, params: [inbox] },
      ], { prepare: true });
      const legacy: Entry = {
        seq: 7, kind: 'receipt', appinfo: 'old-7', conv: { type: 'group', id: 'g1' }, from: 'bob', sendTime: 1_700_000_000_000,
        type: 'text', body: { text: 'hi' }, referSeq: 3, seqs: [3, 4], readBy: ['bob'], recall: { appinfo: 'm-1', sendTime: 1_699_999_999_000 },
      };
      expect(await a.timeline.getEntry(inbox, 7)).toEqual(legacy);
      expect(await a.timeline.append(inbox, [msgEntry(8, 'old-7'), msgEntry(9, 'new-9')])).toEqual([
        { seq: 7, duplicate: true }, { seq: 9, duplicate: false },
      ]);
      expect(await b.timeline.readAfter(inbox, 0, 10)).toEqual([legacy, msgEntry(9, 'new-9')]);
    });

    it('a version-3 row (appinfo in its own cell) reads back whole, dedups and confirms; new rows carry it in doc', async () => {
      const inbox = inboxKey(uniqueTenant(), 'v3');
      const { seq: _seq, appinfo: _appinfo, ...rest } = msgEntry(5, 'v3-5');
      await raw.batch([
        { query: `INSERT INTO ${ks}.inbox_buckets (inbox, bucket) VALUES (?, 0)`, params: [inbox] },
        { query: `INSERT INTO ${ks}.timeline (inbox, bucket, seq, appinfo, doc) VALUES (?, 0, 5, 'v3-5', ?)`, params: [inbox, JSON.stringify(rest)] },
        { query: `INSERT INTO ${ks}.timeline_appinfos (inbox, bucket, appinfo, seq) VALUES (?, 0, 'v3-5', 5)`, params: [inbox] },
      ], { prepare: true });
      expect(await a.timeline.getEntry(inbox, 5)).toEqual(msgEntry(5, 'v3-5'));
      expect(await a.timeline.append(inbox, [msgEntry(6, 'v3-5'), msgEntry(7, 'new-7')])).toEqual([
        { seq: 5, duplicate: true }, { seq: 7, duplicate: false },
      ]);
      // Found through the dedup row and confirmed against each entry, whichever way it holds its appinfo.
      expect(await b.timeline.findSeqs(inbox, ['v3-5', 'new-7', 'absent'])).toEqual(new Map([['v3-5', 5], ['new-7', 7]]));
      expect(await b.timeline.readAfter(inbox, 0, 10)).toEqual([msgEntry(5, 'v3-5'), msgEntry(7, 'new-7')]);
      const written = await raw.execute(`SELECT appinfo, doc FROM ${ks}.timeline WHERE inbox = ? AND bucket = 0 AND seq = 7`, [inbox], { prepare: true });
      expect(written.first()?.get('appinfo')).toBeNull();
      expect(JSON.parse(String(written.first()?.get('doc')))).toMatchObject({ appinfo: 'new-7' });
    });
  });
}
