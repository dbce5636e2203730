/**
 * The CQL append's group commit (append-pipeline.ts): appends of many streams issued together
 * share their round trips, yet each stream keeps its own dedup, its own mutation and its own
 * failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, type Entry, type InboxKey } from '@seqline/core';
import { dup, msgEntry, msgKey, uniqueTenant } from '@seqline/testing';
import { migrateSchema, type ScyllaStores } from '@seqline/store/scylla';
import { TEST_KEYSPACE, newClient, openTestStores, requireOrSkip, servicesAvailable } from './scylla-harness.ts';

const probe = await servicesAvailable();
const seqs = (entries: Entry[]): number[] => entries.map((entry) => entry.seq);

if (requireOrSkip(probe, 'CQL group commit')) {
  describe('CQL group commit', () => {
    const raw = newClient();
    let s: ScyllaStores;
    beforeAll(async () => {
      await migrateSchema(raw, { keyspace: TEST_KEYSPACE });
      s = await openTestStores();
    }, 120_000);
    afterAll(async () => {
      await s.close();
      await raw.shutdown();
    });

    it('streams sharing a group and the same appinfos each get their own copy; only a real resend is a duplicate', async () => {
      const tenant = uniqueTenant();
      const inboxes = Array.from({ length: 120 }, (_, i) => inboxKey(tenant, `u${i}`));
      // The same message fanned out: one appinfo in every inbox, written in shared batches.
      const first = await Promise.all(
        inboxes.map((inbox) => s.timeline.append({ inbox, entries: [msgEntry(1, 'fan-1'), msgEntry(2, `own-${inbox}`)] })),
      );
      expect(first.every((out) => out.every((o) => !o.duplicate))).toBe(true);
      // Again in one tick: half resend (duplicates), half send something new.
      const second = await Promise.all(
        inboxes.map((inbox, i) => s.timeline.append({ inbox, entries: i % 2 === 0 ? [msgEntry(3, 'fan-1')] : [msgEntry(3, 'fan-2')] })),
      );
      second.forEach((out, i) => expect(out).toEqual([i % 2 === 0 ? dup(msgEntry(1, 'fan-1')) : { seq: 3, duplicate: false }]));
      const heads = await Promise.all(inboxes.map((inbox) => s.timeline.headSeq(inbox)));
      heads.forEach((head, i) => expect(head).toBe(i % 2 === 0 ? 2 : 3));
      const all = await Promise.all(inboxes.map((inbox) => s.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 })));
      all.forEach((entries, i) =>
        expect(entries.map((e) => e.appinfo)).toEqual(['fan-1', `own-${inboxes[i]}`, ...(i % 2 === 0 ? [] : ['fan-2'])]),
      );
    });

    it('a refusing guard or a bad seq fails only its own append in a shared group', async () => {
      const tenant = uniqueTenant();
      const inboxes = Array.from({ length: 40 }, (_, i) => inboxKey(tenant, `u${i}`));
      await Promise.all(inboxes.map((inbox) => s.timeline.append({ inbox, entries: [msgEntry(5, 'base')] })));
      let late = 0;
      const outcomes = await Promise.allSettled(
        inboxes.map((inbox, i) => {
          if (i % 4 === 1)
            return s.timeline.append({
              inbox,
              entries: [msgEntry(6, 'x')],
              guard: () => {
                throw new Error('deposed');
              },
            });
          if (i % 4 === 2)
            return s.timeline.append({
              inbox,
              entries: [msgEntry(6, 'x')],
              guard: () => {
                if (++late > 5) throw new Error('deposed late');
              },
            });
          if (i % 4 === 3) return s.timeline.append({ inbox, entries: [msgEntry(4, 'x')] }); // below the head
          return s.timeline.append({ inbox, entries: [msgEntry(6, 'x'), msgEntry(7, 'y')] });
        }),
      );
      for (const [i, outcome] of outcomes.entries()) {
        const inbox = inboxes[i] as InboxKey;
        const entries = seqs(await s.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }));
        if (i % 4 === 0) {
          expect(outcome.status).toBe('fulfilled');
          expect(entries).toEqual([5, 6, 7]);
        } else if (i % 4 === 2 && outcome.status === 'fulfilled') {
          expect(entries).toEqual([5, 6]); // its guard held for its write
        } else {
          expect(outcome.status).toBe('rejected');
          expect(entries).toEqual([5]);
          expect(await s.timeline.headSeq(inbox)).toBe(5);
          expect((await s.timeline.findSeqs({ inbox, keys: [msgKey('x')] })).size).toBe(0);
        }
      }
      expect(outcomes.filter((o, i) => i % 4 === 2 && o.status === 'rejected').length).toBeGreaterThan(0);
    });

    it('a large append (its own batches) and small ones in the same group all land in order', async () => {
      const tenant = uniqueTenant();
      const big = inboxKey(tenant, 'big');
      const small = Array.from({ length: 30 }, (_, i) => inboxKey(tenant, `s${i}`));
      const bigBatch = Array.from({ length: 250 }, (_, i) => msgEntry(i + 1, `b${i}`, { body: { text: 'x'.repeat(400) } }));
      await Promise.all([
        s.timeline.append({ inbox: big, entries: bigBatch }),
        ...small.map((inbox) => s.timeline.append({ inbox, entries: [msgEntry(1, 'a'), msgEntry(2, 'b')] })),
      ]);
      expect(seqs(await s.timeline.readAfter({ inbox: big, afterSeq: 0, limit: 300 }))).toEqual(bigBatch.map((e) => e.seq));
      for (const inbox of small) expect(seqs(await s.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }))).toEqual([1, 2]);
    });
  });
}
