/**
 * The store reads of a 1:1 send, counted over the real LMDB timeline: one counting decorator
 * in front of the inbox owner's store, one in front of messaging's. The store's append answers
 * a resend with the original it stored, so the send does not read it back; only a resend the
 * owner answered from memory (it keeps seqs, not entries) costs one read of the original.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, timelineOf, type DedupKey, type Entry, type InboxKey, type TimelineReader, type TimelineStore } from '@seqline/core';
import { createMessaging, type Messaging } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig, type RigOptions } from './support/embedded-rig.ts';

type Reader = 'owner' | 'messaging';

/** One read as a counting decorator saw it. */
interface Read {
  by: Reader;
  method: keyof TimelineReader;
  inbox: InboxKey;
}

/** The read half of `inner`, recording every call; appends go straight to `inner`. */
function counting(inner: TimelineStore, by: Reader, reads: Read[]): TimelineStore {
  const seen = (method: keyof TimelineReader, inbox: InboxKey): void => void reads.push({ by, method, inbox });
  const reader: TimelineReader = {
    findSeqs: (input: { inbox: InboxKey; keys: readonly DedupKey[] }) => (seen('findSeqs', input.inbox), inner.findSeqs(input)),
    getEntry: (input) => (seen('getEntry', input.inbox), inner.getEntry(input)),
    readAfter: (input) => (seen('readAfter', input.inbox), inner.readAfter(input)),
    readBefore: (input) => (seen('readBefore', input.inbox), inner.readBefore(input)),
    headSeq: (inbox) => (seen('headSeq', inbox), inner.headSeq(inbox)),
    getReaders: (input) => (seen('getReaders', input.inbox), inner.getReaders(input)),
  };
  return timelineOf({ reader, writer: inner });
}

const alice = { tenant: 't', user: 'alice' };
const aliceInbox = inboxKey('t', 'alice');

interface CountedRig {
  rig: EmbeddedRig;
  messaging: Messaging;
  reads: Read[];
  /** The reads made while `run` ran. */
  during(run: () => Promise<unknown>): Promise<Read[]>;
}

async function countedRig(name: string, options: RigOptions = {}): Promise<CountedRig> {
  const reads: Read[] = [];
  const rig = await openEmbeddedRig(name, { ...options, wrapTimeline: (store, by) => counting(store, by, reads) });
  const messaging = createMessaging(rig.deps);
  return {
    rig,
    messaging,
    reads,
    async during(run) {
      const from = reads.length;
      await run();
      return reads.slice(from);
    },
  };
}

const send = (c: CountedRig, appinfo: string, text: string) =>
  c.messaging.send(alice, { appinfo, to: { user: 'bob' }, type: 'text', body: { text } });

describe('store reads of a 1:1 send', () => {
  let remembered: CountedRig;
  let forgetful: CountedRig;
  beforeAll(async () => {
    remembered = await countedRig('send-reads-memory');
    // The owner remembers no resend: the store's append dedups every one (a resend after a takeover).
    forgetful = await countedRig('send-reads-store', { maxRecentAppinfos: 0 });
    // Each inbox's first append reads its head once: not what is counted here.
    for (const c of [remembered, forgetful]) await send(c, 'warm-up', 'hello');
  });
  afterAll(async () => {
    for (const c of [remembered, forgetful]) await c?.rig.close();
  });

  it('a new message: no read at all', async () => {
    for (const c of [remembered, forgetful]) {
      expect(await c.during(() => send(c, 'fresh', 'hi'))).toEqual([]);
    }
  });

  it('a resend the store dedups: answered with the original, nothing read back', async () => {
    const first = await send(forgetful, 'resent-to-store', 'original');
    let again: Awaited<ReturnType<typeof send>> | undefined;
    const reads = await forgetful.during(async () => (again = await send(forgetful, 'resent-to-store', 'resend')));
    expect(again).toMatchObject({ seq: first.seq, duplicate: true, sendTime: first.sendTime, body: { text: 'original' } });
    expect(reads).toEqual([]);
  });

  it('a resend the owner answers from memory (a seq, no original): the send reads the original once, by seq', async () => {
    const first = await send(remembered, 'resent-to-owner', 'original');
    let again: Awaited<ReturnType<typeof send>> | undefined;
    const reads = await remembered.during(async () => (again = await send(remembered, 'resent-to-owner', 'resend')));
    expect(again).toMatchObject({ seq: first.seq, duplicate: true, sendTime: first.sendTime, body: { text: 'original' } });
    // The recipient's copy is re-delivered as a duplicate too: nothing is read for it.
    expect(reads).toEqual([{ by: 'messaging', method: 'getEntry', inbox: aliceInbox }]);
  });

  it('the recipient holds one copy of each message, the original', async () => {
    for (const c of [remembered, forgetful]) {
      const copies: Entry[] = (await c.rig.engine.timeline.readAfter({ inbox: inboxKey('t', 'bob'), afterSeq: 0, limit: 100 })).filter(
        (e) => e.appinfo.startsWith('resent'),
      );
      expect(copies).toHaveLength(1);
      expect(copies[0]?.body).toEqual({ text: 'original' });
    }
  });
});
