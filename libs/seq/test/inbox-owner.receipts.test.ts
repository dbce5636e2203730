import { describe, expect, it } from 'vitest';
import type { Entry, NewEntry } from '@seqline/core';
import { inbox, msg, rig } from './harness.ts';

function groupMsg(from: string, text: string): NewEntry {
  return { ...msg(from, text), conv: { type: 'group', id: 'g1' } };
}

const receipts = (entries: Entry[]): Entry[] => entries.filter((e) => e.kind === 'receipt');

describe('InboxOwner receipts', () => {
  it('20 concurrent addReceipt calls end with all 20 readers and a last receipt carrying all of them', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const m = groupMsg('alice', 'hello group');
    const [stored] = await o.append(alice, [m]);
    const readers = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    await Promise.all(readers.map((who) => o.addReceipt(alice, m.appinfo, [who])));
    expect(await r.timeline.getReaders(alice, stored!.seq)).toEqual(readers);
    const rs = receipts(r.timeline.all(alice));
    expect(rs.length).toBeGreaterThan(0);
    expect(rs.length).toBeLessThan(20); // merged
    const last = rs.at(-1)!;
    expect(last).toMatchObject({
      kind: 'receipt',
      appinfo: `receipt:${stored!.seq}:20`,
      referSeq: stored!.seq,
      readBy: readers,
      conv: { type: 'group', id: 'g1' },
      from: 'system',
    });
    // Every receipt entry only grows.
    const sizes = rs.map((e) => e.readBy?.length ?? 0);
    expect(sizes).toEqual([...sizes].sort((x, y) => x - y));
    // Each receipt write was pushed like any other entry.
    expect(
      r.push
        .forInbox(alice)
        .flatMap((p) => p.entries)
        .filter((e) => e.kind === 'receipt'),
    ).toHaveLength(rs.length);
  });

  it('no-ops: unknown message, empty readers, readers already known', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const m = msg('alice', 'hi');
    await o.append(alice, [m]);
    await o.addReceipt(alice, 'nope', ['bob']);
    await o.addReceipt(alice, m.appinfo, []);
    await o.addReceipt(alice, m.appinfo, ['bob']);
    await o.addReceipt(alice, m.appinfo, ['bob']);
    expect(receipts(r.timeline.all(alice))).toHaveLength(1);
  });

  it('a receipt queued behind the append of its message sees the message (FIFO)', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const m = msg('alice', 'hi');
    const appended = o.append(alice, [m]);
    const receipted = o.addReceipt(alice, m.appinfo, ['bob']);
    await Promise.all([appended, receipted]);
    expect(receipts(r.timeline.all(alice))).toHaveLength(1);
  });

  it('merges receipts for several messages in one run, each with its own receipt entry', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const ms = [msg('alice', 'a'), msg('alice', 'b')];
    const out = await o.append(alice, ms);
    await Promise.all([
      o.addReceipt(alice, ms[0]!.appinfo, ['x']),
      o.addReceipt(alice, ms[1]!.appinfo, ['y']),
      o.addReceipt(alice, ms[0]!.appinfo, ['z']),
    ]);
    const rs = receipts(r.timeline.all(alice));
    const lastFor = (seq: number): Entry | undefined => rs.filter((e) => e.referSeq === seq).at(-1);
    expect(lastFor(out[0]!.seq)?.readBy).toEqual(['x', 'z']);
    expect(lastFor(out[1]!.seq)?.readBy).toEqual(['y']);
  });

  it("goes to the inbox owner's own message, not to another sender's message with the same appinfo", async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const theirs = msg('bob', 'from bob', 'local-1');
    const own = msg('alice', 'from alice', 'local-1');
    const [, mine] = await o.append(alice, [theirs, own]);
    await o.addReceipt(alice, 'local-1', ['carol']);
    expect(receipts(r.timeline.all(alice)).map((e) => e.referSeq)).toEqual([mine!.seq]);
    expect(await r.timeline.getReaders(alice, mine!.seq)).toEqual(['carol']);
  });

  it('a failure between the receipt entry and the reader merge is healed by a retry without a second copy', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const m = msg('alice', 'hi');
    const [stored] = await o.append(alice, [m]);
    r.timeline.failNextAddReaders = new Error('timeout');
    await expect(o.addReceipt(alice, m.appinfo, ['bob'])).rejects.toThrow('timeout');
    expect(receipts(r.timeline.all(alice))).toHaveLength(1); // entry written first
    await o.addReceipt(alice, m.appinfo, ['bob']); // retry (e.g. job redelivery)
    expect(receipts(r.timeline.all(alice))).toHaveLength(1); // same appinfo: deduped
    expect(await r.timeline.getReaders(alice, stored!.seq)).toEqual(['bob']);
    await o.addReceipt(alice, m.appinfo, ['carol']);
    expect(receipts(r.timeline.all(alice)).at(-1)?.readBy).toEqual(['bob', 'carol']);
  });
});
