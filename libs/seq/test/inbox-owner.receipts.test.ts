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
    const [stored] = await o.append({ inbox: alice, entries: [m] });
    const readers = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    await Promise.all(readers.map((who) => o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: [who] })));
    expect(await r.timeline.getReaders({ inbox: alice, seq: stored!.seq })).toEqual(readers);
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
    await o.append({ inbox: alice, entries: [m] });
    await o.addReceipt({ inbox: alice, appinfo: 'nope', readers: ['bob'] });
    await o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: [] });
    await o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: ['bob'] });
    await o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: ['bob'] });
    expect(receipts(r.timeline.all(alice))).toHaveLength(1);
  });

  it('a receipt queued behind the append of its message sees the message (FIFO)', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const m = msg('alice', 'hi');
    const appended = o.append({ inbox: alice, entries: [m] });
    const receipted = o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: ['bob'] });
    await Promise.all([appended, receipted]);
    expect(receipts(r.timeline.all(alice))).toHaveLength(1);
  });

  it('merges receipts for several messages in one run, each with its own receipt entry', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const ms = [msg('alice', 'a'), msg('alice', 'b')];
    const out = await o.append({ inbox: alice, entries: ms });
    await Promise.all([
      o.addReceipt({ inbox: alice, appinfo: ms[0]!.appinfo, readers: ['x'] }),
      o.addReceipt({ inbox: alice, appinfo: ms[1]!.appinfo, readers: ['y'] }),
      o.addReceipt({ inbox: alice, appinfo: ms[0]!.appinfo, readers: ['z'] }),
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
    const [, mine] = await o.append({ inbox: alice, entries: [theirs, own] });
    await o.addReceipt({ inbox: alice, appinfo: 'local-1', readers: ['carol'] });
    expect(receipts(r.timeline.all(alice)).map((e) => e.referSeq)).toEqual([mine!.seq]);
    expect(await r.timeline.getReaders({ inbox: alice, seq: mine!.seq })).toEqual(['carol']);
  });

  it('a failure between the receipt entry and the reader merge is healed by a retry without a second copy', async () => {
    const r = rig();
    const o = r.owner(1);
    const alice = inbox('alice');
    const m = msg('alice', 'hi');
    const [stored] = await o.append({ inbox: alice, entries: [m] });
    r.timeline.failNextAddReaders = new Error('timeout');
    await expect(o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: ['bob'] })).rejects.toThrow('timeout');
    expect(receipts(r.timeline.all(alice))).toHaveLength(1); // entry written first
    await o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: ['bob'] }); // retry (e.g. job redelivery)
    expect(receipts(r.timeline.all(alice))).toHaveLength(1); // same appinfo: deduped
    expect(await r.timeline.getReaders({ inbox: alice, seq: stored!.seq })).toEqual(['bob']);
    await o.addReceipt({ inbox: alice, appinfo: m.appinfo, readers: ['carol'] });
    expect(receipts(r.timeline.all(alice)).at(-1)?.readBy).toEqual(['bob', 'carol']);
  });
});
