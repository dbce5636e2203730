/**
 * Seq-log cases for data the previous version stored, whose dedup rows are keyed by the plain
 * appinfo (shared by the inbox and group stream contracts). After an upgrade a resend of an old
 * message, or an old fanout job run again, must not store a second copy; another sender's
 * message with the same appinfo is new; and an old row whose appinfo reads like a new message
 * key ("alice/x", carol's) is never taken for alice's "x", nor lost when alice's "x" is stored.
 */
import { expect, it } from 'vitest';
import { messageKey, serverEntryKey, type Entry } from '@seqline/core';
import { dup, msgEntry, seqsOf, uniqueName, uniqueTenant } from './harness.ts';
import type { PreviousLayoutWriter, SeqLogPort, SeqLogSuite } from './seq-log-port.ts';

export function previousLayoutTests<K extends string, S extends SeqLogPort<K>>(
  suite: SeqLogSuite<K, S>,
  write: PreviousLayoutWriter<K>,
): void {
  const from = (sender: string, seq: number, appinfo: string, over: Partial<Entry> = {}): Entry =>
    msgEntry(seq, appinfo, { from: sender, body: { text: `${sender}'s ${appinfo}` }, ...over });

  it('after an upgrade, old messages still dedup, for their own sender only', async () => {
    const dataKey = uniqueName('upgrade');
    const key = suite.makeKey(uniqueTenant(), 'upgraded');
    const old: Entry[] = [
      from('alice', 1, 'local-1'),
      from('carol', 2, 'alice/x'), // reads like the key alice's "x" gets now
      { ...from('alice', 3, 'recall:local-1'), kind: 'recall', recall: { appinfo: 'local-1', sendTime: 1 } },
      from('dave', 4, 'local-2'),
    ];
    await write(dataKey, key, old);
    const opened = await suite.open(dataKey);
    const { store } = opened;
    try {
      expect(seqsOf(await suite.readAfter(store, key, 0, 10))).toEqual([1, 2, 3, 4]);
      expect(await store.headSeq(key)).toBe(4);
      // A client's resend of an old message: the original seq, nothing stored.
      expect(await suite.append(store, key, [from('alice', 10, 'local-1', { body: { text: 'resend' } })])).toEqual([dup(old[0] as Entry)]);
      // An old fanout job run again after the upgrade: its copies dedup, in one merged batch too.
      expect(await suite.append(store, key, [from('dave', 11, 'local-2'), from('alice', 12, 'local-1'), old[2] as Entry])).toEqual([
        dup(old[3] as Entry),
        dup(old[0] as Entry),
        dup(old[2] as Entry),
      ]);
      // Another sender's message with an old appinfo is a message of its own.
      expect(await suite.append(store, key, [from('carol', 13, 'local-1')])).toEqual([{ seq: 13, duplicate: false }]);
      // alice's "x" is new, although carol's old row has its key's text; carol's old message still dedups.
      expect(await suite.append(store, key, [from('alice', 14, 'x')])).toEqual([{ seq: 14, duplicate: false }]);
      expect(await suite.append(store, key, [from('carol', 15, 'alice/x')])).toEqual([dup(old[1] as Entry)]);
      expect(await suite.append(store, key, [from('alice', 16, 'x')])).toEqual([dup(from('alice', 14, 'x'))]);
      expect(seqsOf(await suite.readAfter(store, key, 0, 20))).toEqual([1, 2, 3, 4, 13, 14]);
      const found = await suite.find(store, key, [
        messageKey('alice', 'local-1'),
        messageKey('carol', 'local-1'),
        messageKey('carol', 'alice/x'),
        messageKey('alice', 'x'),
        messageKey('bob', 'local-2'),
        serverEntryKey('recall:local-1'),
      ]);
      expect([...found.entries()].sort()).toEqual(
        [
          [messageKey('alice', 'local-1'), 1],
          [messageKey('carol', 'local-1'), 13],
          [messageKey('carol', 'alice/x'), 2],
          [messageKey('alice', 'x'), 14],
          [serverEntryKey('recall:local-1'), 3],
        ].sort(),
      );
    } finally {
      await opened.close();
    }
  });
}
