/**
 * Seq-log cases for appinfos that are unique per sender only (shared by the inbox and group
 * stream contracts): one stream holds messages of many senders, two of which may choose the
 * same appinfo. Each sender's message is stored; each sender's resend is its own duplicate; a
 * server entry keeps its appinfo as key, which no message key can equal.
 */
import { expect, it } from 'vitest';
import { messageKey, serverEntryKey, type Entry } from '@seqline/core';
import { dup, msgEntry, seqsOf, uniqueTenant } from './harness.ts';
import type { SeqLogPort, SeqLogSuite } from './seq-log-port.ts';

export function sharedAppinfoTests<K extends string, S extends SeqLogPort<K>>(ctx: { readonly store: S }, suite: SeqLogSuite<K, S>): void {
  const freshKey = (): K => suite.makeKey(uniqueTenant(), 'shared');
  const from = (sender: string, seq: number, appinfo: string, over: Partial<Entry> = {}): Entry =>
    msgEntry(seq, appinfo, { from: sender, body: { text: `${sender}'s ${appinfo}` }, ...over });

  it('two senders, one appinfo, one stream: two entries, the appinfo stored as sent', async () => {
    const key = freshKey();
    expect(await suite.append(ctx.store, key, [from('alice', 1, 'local-1')])).toEqual([{ seq: 1, duplicate: false }]);
    expect(await suite.append(ctx.store, key, [from('carol', 2, 'local-1')])).toEqual([{ seq: 2, duplicate: false }]);
    // In one call too (a merged fanout batch), beside a repeat of the first.
    expect(
      await suite.append(ctx.store, key, [from('dave', 3, 'local-1'), from('alice', 4, 'local-1'), from('erin', 5, 'local-1')]),
    ).toEqual([{ seq: 3, duplicate: false }, dup(from('alice', 1, 'local-1')), { seq: 5, duplicate: false }]);
    const all = await suite.readAfter(ctx.store, key, 0, 10);
    expect(all.map((e) => [e.seq, e.from, e.appinfo])).toEqual([
      [1, 'alice', 'local-1'],
      [2, 'carol', 'local-1'],
      [3, 'dave', 'local-1'],
      [5, 'erin', 'local-1'],
    ]);
    const found = await suite.find(ctx.store, key, [
      messageKey('alice', 'local-1'),
      messageKey('carol', 'local-1'),
      messageKey('bob', 'local-1'),
    ]);
    expect([...found.entries()].sort()).toEqual([
      [messageKey('alice', 'local-1'), 1],
      [messageKey('carol', 'local-1'), 2],
    ]);
  });

  it("a sender's resend is a duplicate with its own original seq, whoever else used the appinfo", async () => {
    const key = freshKey();
    await suite.append(ctx.store, key, [from('alice', 1, 'local-1'), from('carol', 2, 'local-1')]);
    // Each answered with their own original: the right sender's entry, as stored.
    expect(await suite.append(ctx.store, key, [from('carol', 3, 'local-1', { body: { text: 'resend' } })])).toEqual([
      dup(from('carol', 2, 'local-1')),
    ]);
    expect(await suite.append(ctx.store, key, [from('alice', 4, 'local-1')])).toEqual([dup(from('alice', 1, 'local-1'))]);
    expect(seqsOf(await suite.readAfter(ctx.store, key, 0, 10))).toEqual([1, 2]);
    expect(await ctx.store.headSeq(key)).toBe(2);
  });

  it('a server entry keeps its appinfo as key: entries whose texts look like each other’s keys never collide', async () => {
    const key = freshKey();
    const entries: Entry[] = [
      from('alice', 1, 'x'), // key alice/x
      from('carol', 2, 'alice/x'), // a client appinfo that reads like alice's key: key carol/alice/x
      from('recall', 3, 'alice/x'), // a user named like a server kind: key recall/alice/x
      { ...from('alice', 4, 'recall:alice/x'), kind: 'recall', recall: { appinfo: 'x', sendTime: 1, from: 'alice' } }, // server: its appinfo
      { ...from('bob', 5, 'alice:x'), kind: 'read', referSeq: 1, seqs: [1] }, // server: its appinfo
    ];
    expect(await suite.append(ctx.store, key, entries)).toEqual(entries.map((e) => ({ seq: e.seq, duplicate: false })));
    expect(await suite.readAfter(ctx.store, key, 0, 10)).toEqual(entries);
    // The same server appinfo from anyone else is that entry again (server ids name their scope).
    expect(await suite.append(ctx.store, key, [{ ...from('dave', 6, 'alice:x'), kind: 'read', referSeq: 1, seqs: [1] }])).toEqual([
      dup(entries[4] as Entry),
    ]);
    const found = await suite.find(ctx.store, key, [
      messageKey('alice', 'x'),
      messageKey('carol', 'alice/x'),
      messageKey('recall', 'alice/x'),
      serverEntryKey('recall:alice/x'),
      serverEntryKey('alice:x'),
    ]);
    expect([...found.values()].sort()).toEqual([1, 2, 3, 4, 5]);
  });
}
