/**
 * InboxOwner on the real LMDB engine with its conversation index: each push carries the
 * touched conversations' states (v1.1 `convs`), taken from what the index writer computed in
 * the append (no index read), read only where the writer did not hold them; a lagging, slow or
 * failing read never holds a push back (it goes without `convs`, in order); read-fanout groups
 * get their stream side; a rebuild runs in the inbox's queue, after the appends queued before it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  InternalError,
  type Conv,
  type ConversationIndex,
  type ConversationRebuilder,
  type ConversationStreamSides,
  type Entry,
  type InboxKey,
  type NewEntry,
  type TimelineStore,
} from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { historyEditOf, historyMsg, historyReadConv } from '@seqline/testing';
import { InboxOwner } from '../src/index.ts';
import { MemoryLogger, RecordingPushBus } from './fakes.ts';
import { inbox, msg } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-push-convs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

interface Setup {
  engine: EmbeddedEngine;
  owner: InboxOwner;
  push: RecordingPushBus;
  logger: MemoryLogger;
}

/**
 * `untold`: the timeline tells no conversation states (a store whose index write failed, or one
 * that keeps none), so the owner reads them from the index.
 */
async function setup(
  index?: (real: ConversationIndex) => ConversationIndex,
  extra: {
    pushConvsWaitMs?: number;
    conversationRebuilder?: ConversationRebuilder | null;
    untold?: boolean;
    streamSides?: ConversationStreamSides;
  } = {},
): Promise<Setup> {
  const engine = await openEmbeddedEngine({ dir: join(root, `d${++dirs}`) });
  const push = new RecordingPushBus();
  const logger = new MemoryLogger();
  const owner = new InboxOwner({
    timeline: extra.untold === true ? untold(engine.timeline) : engine.timeline,
    ceilings: engine.ceilings,
    push,
    logger,
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
    conversations: index ? index(engine.conversations) : engine.conversations,
    conversationRebuilder: extra.conversationRebuilder === null ? undefined : (extra.conversationRebuilder ?? engine.conversationRebuilder),
    pushConvsWaitMs: extra.pushConvsWaitMs,
    streamSides: extra.streamSides,
  });
  return { engine, owner, push, logger };
}

/** Waits until `inbox` has had `n` pushes. */
async function pushes(push: RecordingPushBus, key: InboxKey, n: number, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (push.forInbox(key).length < n) {
    if (Date.now() > deadline) throw new Error(`only ${push.forInbox(key).length} of ${n} pushes`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return push.forInbox(key);
}

/** The real index with one method replaced (a fault injector over the real store, not a mock of it). */
function overriding(real: ConversationIndex, patch: Partial<ConversationIndex>): ConversationIndex {
  return {
    listConversations: (input) => real.listConversations(input),
    getConversation: (input) => real.getConversation(input),
    conversationEntries: (input) => real.conversationEntries(input),
    headSeq: (i) => real.headSeq(i),
    hiddenSeqs: (input) => real.hiddenSeqs(input),
    ...patch,
  };
}

/** The real timeline, but its appends tell nothing of the index (the listener is not passed on). */
function untold(real: TimelineStore): TimelineStore {
  return {
    append: ({ inbox, entries, guard }) => real.append({ inbox, entries, guard }),
    findSeqs: (input) => real.findSeqs(input),
    getEntry: (input) => real.getEntry(input),
    readAfter: (input) => real.readAfter(input),
    readBefore: (input) => real.readBefore(input),
    headSeq: (i) => real.headSeq(i),
    addReaders: (input) => real.addReaders(input),
    getReaders: (input) => real.getReaders(input),
  };
}

const bobInbox = inbox('bob');
const fromAlice = (text: string): NewEntry => msg('alice', text);
let made = 0;
const readOf = (conv: Conv, upToSeq: number): NewEntry => historyReadConv(`read:${++made}`, 'bob', conv, upToSeq);
const groupMsg = (group: string, from: string, text: string): NewEntry =>
  historyMsg(`g${++made}`, { type: 'group', id: group }, from, undefined, { text });

describe('InboxOwner push convs', () => {
  it('carries the touched conversations, exact at the pushed entries, with the unread the index counts', async () => {
    const { owner, push, engine } = await setup();
    await owner.append({ inbox: bobInbox, entries: [fromAlice('one')] });
    await owner.append({ inbox: bobInbox, entries: [fromAlice('two'), msg('carol', 'hi')] });
    const [p1, p2] = await pushes(push, bobInbox, 2);
    expect(p1!.convs).toEqual([expect.objectContaining({ conv: { type: 'user', id: 'alice' }, unread: 1, asOfSeq: p1!.entries[0]!.seq })]);
    expect(p2!.convs?.map((c) => [c.conv.id, c.unread])).toEqual([
      ['alice', 2],
      ['carol', 1],
    ]);
    expect(p2!.convs?.[0]).toEqual(await engine.conversations.getConversation({ inbox: bobInbox, conv: { type: 'user', id: 'alice' } }));
    await owner.close();
    await engine.close();
  });

  it('takes the states the index writer computed in the append: no index read, the same states the index then holds', async () => {
    const reads: string[] = [];
    const counting = (real: ConversationIndex) =>
      overriding(real, {
        headSeq: (i) => (reads.push('headSeq'), real.headSeq(i)),
        getConversation: ({ inbox: i, conv: c }) => (reads.push('getConversation'), real.getConversation({ inbox: i, conv: c })),
      });
    const { owner, push, engine } = await setup(counting);
    const first = fromAlice('one');
    const [m1] = await owner.append({ inbox: bobInbox, entries: [first] });
    const three = fromAlice('three');
    const [m3] = (await owner.append({ inbox: bobInbox, entries: [msg('carol', 'two'), three] })).slice(1);
    // A conversation read, then an edit of the last message by its sender: `last` stays, then changes.
    await owner.append({ inbox: bobInbox, entries: [readOf({ type: 'user', id: 'alice' }, m1!.seq)] });
    const third: Entry = { ...three, seq: m3!.seq };
    await owner.append({ inbox: bobInbox, entries: [historyEditOf(third, 'alice', 1_800_000_000_000, 'three, edited')] });
    const got = await pushes(push, bobInbox, 4);
    expect(reads).toEqual([]);
    for (const p of got) {
      expect(p.convs?.length).toBeGreaterThan(0);
      for (const c of p.convs!) {
        expect(c.asOfSeq).toBeGreaterThanOrEqual(p.entries.findLast((e) => e.conv.id === c.conv.id)?.seq ?? 0);
      }
    }
    const latest = got.at(-1)!.convs!;
    expect(latest).toEqual([await engine.conversations.getConversation({ inbox: bobInbox, conv: { type: 'user', id: 'alice' } })]);
    expect(latest[0]!.last).toMatchObject({ seq: m3!.seq, body: { text: 'three, edited' } });
    expect(got[2]!.convs).toEqual([
      expect.objectContaining({ readSeq: m1!.seq, unread: 1, last: expect.objectContaining({ seq: m3!.seq }) }),
    ]);
    await owner.close();
    await engine.close();
  });

  it('a conversation an entry names without changing it is read: absent when the index has none', async () => {
    const reads: string[] = [];
    const { owner, push, engine } = await setup((real) =>
      overriding(real, { getConversation: ({ inbox: i, conv: c }) => (reads.push(c.id), real.getConversation({ inbox: i, conv: c })) }),
    );
    await owner.append({ inbox: bobInbox, entries: [readOf({ type: 'user', id: 'nobody' }, 5), fromAlice('hi')] });
    const [p] = await pushes(push, bobInbox, 1);
    expect(reads).toEqual(['nobody']);
    expect(p!.convs?.map((c) => c.conv.id)).toEqual(['alice']);
    await owner.close();
    await engine.close();
  });

  it('a store that did not tell the states (a failed index write) and an index behind: the push goes without convs, logged at debug', async () => {
    const { owner, push, engine, logger } = await setup((real) => overriding(real, { headSeq: async () => 0 }), { untold: true });
    await owner.append({ inbox: bobInbox, entries: [fromAlice('lagging')] });
    const [p] = await pushes(push, bobInbox, 1);
    expect(p!.entries).toHaveLength(1);
    expect(p!.convs).toBeUndefined();
    expect(logger.records.some((r) => r.level === 'debug' && r.msg === 'push without convs')).toBe(true);
    await owner.close();
    await engine.close();
  });

  it('a slow or failing index read never holds a push back beyond the bound, and pushes stay in append order', async () => {
    let calls = 0;
    const { owner, push, engine } = await setup(
      (real) =>
        overriding(real, {
          // The first read hangs 2 s, the second fails, the third answers.
          getConversation: async ({ inbox: i, conv: c }) => {
            const n = ++calls;
            if (n === 1) await new Promise((r) => setTimeout(r, 2000));
            if (n === 2) throw new Error('index unavailable');
            return real.getConversation({ inbox: i, conv: c });
          },
        }),
      { pushConvsWaitMs: 30, untold: true },
    );
    const started = Date.now();
    await owner.append({ inbox: bobInbox, entries: [fromAlice('slow')] });
    await owner.append({ inbox: bobInbox, entries: [fromAlice('failing')] });
    await owner.append({ inbox: bobInbox, entries: [fromAlice('fine')] });
    const got = await pushes(push, bobInbox, 3);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(got.map((p) => p.convs === undefined)).toEqual([true, true, false]);
    // In order: each push's prevSeq is the previous push's last seq.
    expect(got.map((p) => p.prevSeq)).toEqual([0, got[0]!.entries[0]!.seq, got[1]!.entries[0]!.seq]);
    expect(got[2]!.convs?.[0]?.unread).toBe(3);
    await owner.close();
    await engine.close();
  });

  it('a read-fanout group: the stream side is added to its state, other states pass as computed', async () => {
    const seen: string[][] = [];
    const streamSides: ConversationStreamSides = {
      withStreamSides: async ({ states }) => {
        seen.push(states.map((s) => s.conv.id));
        return states.map((s) =>
          s.conv.type === 'group' ? { ...s, unread: s.unread + 7, stream: { lastGseq: 9, readGseq: 2, unreadCapped: false } } : s,
        );
      },
    };
    const { owner, push, engine } = await setup(undefined, { streamSides });
    await owner.append({ inbox: bobInbox, entries: [fromAlice('one')] });
    await owner.append({ inbox: bobInbox, entries: [groupMsg('g1', 'alice', 'hi all')] });
    const [p1, p2] = await pushes(push, bobInbox, 2);
    expect(seen).toEqual([['g1']]); // a push without a group state does not ask
    expect(p1!.convs?.[0]?.stream).toBeUndefined();
    expect(p2!.convs).toEqual([
      expect.objectContaining({ conv: { type: 'group', id: 'g1' }, unread: 8, stream: { lastGseq: 9, readGseq: 2, unreadCapped: false } }),
    ]);
    await owner.close();
    await engine.close();
  });

  it('rebuildConversations runs after the appends queued before it; without a rebuilder it is INTERNAL', async () => {
    const { owner, engine } = await setup();
    const appends = [
      owner.append({ inbox: bobInbox, entries: [fromAlice('a')] }),
      owner.append({ inbox: bobInbox, entries: [fromAlice('b')] }),
    ];
    const report = await owner.rebuildConversations(bobInbox);
    const outcomes = (await Promise.all(appends)).flat();
    expect(report).toEqual({ differed: false, changedConversations: [], conversations: 1, entries: 2, headSeq: outcomes[1]!.seq });
    await owner.close();
    await engine.close();

    const bare = await setup(undefined, { conversationRebuilder: null });
    await expect(bare.owner.rebuildConversations(bobInbox)).rejects.toBeInstanceOf(InternalError);
    await bare.owner.close();
    await bare.engine.close();
  });
});
