/**
 * InboxWriter contract: the single writer of inboxes, in process (InboxOwner) or behind NATS
 * (RemoteInboxWriter + shard owners). Pinned here: seqs rise per inbox; a resend answers the
 * original seq and stores nothing (I3); `appendThen` runs its follow-up only after a first append
 * whose entries were all new, and a follow-up is as idempotent as any append.
 */
import { describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import type { FollowUpAppend, InboxKey, InboxWriter, NewEntry, TimelineStore } from '@seqline/core';
import { uniqueTenant, useSharedStore, type StoreOpener } from './harness.ts';

/** The writer under test and a reader of what it stored. */
export interface InboxWriterRig {
  writer: InboxWriter;
  timeline: TimelineStore;
}

function entry(appinfo: string, to: string, from = 'alice'): NewEntry {
  return { kind: 'msg', appinfo, from, sendTime: 1_700_000_000_000, type: 'text', body: { text: appinfo }, conv: { type: 'user', id: to } };
}

export function inboxWriterContract(name: string, open: StoreOpener<InboxWriterRig>): void {
  describe(`InboxWriter contract: ${name}`, () => {
    const ctx = useSharedStore(open);
    const appinfos = async (inbox: InboxKey): Promise<string[]> =>
      (await ctx.store.timeline.readAfter({ inbox, afterSeq: 0, limit: 1000 })).map((e) => e.appinfo);
    const pair = (): { a: InboxKey; b: InboxKey } => {
      const tenant = uniqueTenant();
      return { a: inboxKey(tenant, 'alice'), b: inboxKey(tenant, 'bob') };
    };
    const followUp = (inbox: InboxKey, appinfo: string): FollowUpAppend => ({
      inbox,
      entries: [entry(appinfo, 'alice', 'alice')],
      timeoutMs: 5000,
    });

    it('allocates rising seqs and answers a resend with the original seq, storing nothing', async () => {
      const { a } = pair();
      const first = await ctx.store.writer.append({ inbox: a, entries: [entry('m1', 'bob'), entry('m2', 'bob')] });
      expect(first.map((o) => o.duplicate)).toEqual([false, false]);
      expect(first[1]!.seq).toBeGreaterThan(first[0]!.seq);
      const resend = await ctx.store.writer.append({
        inbox: a,
        entries: [{ ...entry('m2', 'bob'), body: { text: 'resent' } }, entry('m3', 'bob')],
      });
      expect(resend[0]).toMatchObject({ seq: first[1]!.seq, duplicate: true });
      // With its original when the writer had it at hand: the entry as stored, not the resend.
      if (resend[0]?.original !== undefined) expect(resend[0].original).toEqual({ ...entry('m2', 'bob'), seq: first[1]!.seq });
      expect(resend[1]!.seq).toBeGreaterThan(first[1]!.seq);
      // A repeat within one call is always answered with the first as stored (over the wire too).
      const twice = await ctx.store.writer.append({
        inbox: a,
        entries: [entry('m4', 'bob'), { ...entry('m4', 'bob'), body: { text: 'again' } }],
      });
      expect(twice[1]).toEqual({ seq: twice[0]!.seq, duplicate: true, original: { ...entry('m4', 'bob'), seq: twice[0]!.seq } });
      expect(await appinfos(a)).toEqual(['m1', 'm2', 'm3', 'm4']);
      expect(await ctx.store.writer.headSeq(a)).toBe(twice[0]!.seq);
    });

    it('appendThen appends the follow-up after a first append of new entries', async () => {
      const { a, b } = pair();
      const chained = await ctx.store.writer.appendThen({ inbox: a, entries: [entry('m1', 'bob')], next: followUp(b, 'm1') });
      expect(chained).toMatchObject({ outcomes: [{ duplicate: false }], next: 'appended' });
      expect(await appinfos(a)).toEqual(['m1']);
      expect(await appinfos(b)).toEqual(['m1']);
    });

    it('appendThen skips the follow-up when the first append was a resend', async () => {
      const { a, b } = pair();
      const [original] = await ctx.store.writer.append({ inbox: a, entries: [entry('m1', 'bob')] });
      const chained = await ctx.store.writer.appendThen({ inbox: a, entries: [entry('m1', 'bob')], next: followUp(b, 'other') });
      expect(chained).toMatchObject({ outcomes: [{ seq: original!.seq, duplicate: true }], next: 'skipped' });
      expect(await appinfos(b)).toEqual([]);
    });

    it('a follow-up that is itself a resend in its inbox stores no second copy', async () => {
      const { a, b } = pair();
      await ctx.store.writer.append({ inbox: b, entries: [entry('m1', 'alice', 'alice')] });
      const chained = await ctx.store.writer.appendThen({ inbox: a, entries: [entry('m1', 'bob')], next: followUp(b, 'm1') });
      expect(chained.next).toBe('appended');
      expect(await appinfos(b)).toEqual(['m1']);
    });

    it('concurrent chained appends between two inboxes: one copy each, seqs rising in both', async () => {
      const { a, b } = pair();
      const n = 40;
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          i % 2 === 0
            ? ctx.store.writer.appendThen({ inbox: a, entries: [entry(`ab${i}`, 'bob')], next: followUp(b, `ab${i}`) })
            : ctx.store.writer.appendThen({ inbox: b, entries: [entry(`ba${i}`, 'alice', 'bob')], next: followUp(a, `ba${i}`) }),
        ),
      );
      for (const inbox of [a, b]) {
        const stored = await ctx.store.timeline.readAfter({ inbox, afterSeq: 0, limit: 1000 });
        expect(stored).toHaveLength(n);
        expect(new Set(stored.map((e) => e.appinfo)).size).toBe(n);
        expect(stored.every((e, i) => i === 0 || e.seq > stored[i - 1]!.seq)).toBe(true);
      }
    });
  });
}
