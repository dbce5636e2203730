/**
 * InboxOwner on the real LMDB engine with its conversation index: each push carries the
 * touched conversations' states (v1.1 `convs`), read once per append; a lagging, slow or
 * failing index never holds a push back (it goes without `convs`, in order); a rebuild runs in
 * the inbox's queue, after the appends queued before it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InternalError, type ConversationIndex, type ConversationRebuilder, type InboxKey, type NewEntry } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
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

async function setup(
  index?: (real: ConversationIndex) => ConversationIndex,
  extra: { pushConvsWaitMs?: number; conversationRebuilder?: ConversationRebuilder | null } = {},
): Promise<Setup> {
  const engine = await openEmbeddedEngine({ dir: join(root, `d${++dirs}`) });
  const push = new RecordingPushBus();
  const logger = new MemoryLogger();
  const owner = new InboxOwner({
    timeline: engine.timeline,
    ceilings: engine.ceilings,
    push,
    logger,
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
    conversations: index ? index(engine.conversations) : engine.conversations,
    conversationRebuilder: extra.conversationRebuilder === null ? undefined : (extra.conversationRebuilder ?? engine.conversationRebuilder),
    pushConvsWaitMs: extra.pushConvsWaitMs,
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
    listConversations: (i, p) => real.listConversations(i, p),
    getConversation: (i, c) => real.getConversation(i, c),
    conversationEntries: (i, c, p) => real.conversationEntries(i, c, p),
    headSeq: (i) => real.headSeq(i),
    hiddenSeqs: (i, e) => real.hiddenSeqs(i, e),
    ...patch,
  };
}

const bobInbox = inbox('bob');
const fromAlice = (text: string): NewEntry => msg('alice', text);

describe('InboxOwner push convs', () => {
  it('carries the touched conversations, exact at the pushed entries, with the unread the index counts', async () => {
    const { owner, push, engine } = await setup();
    await owner.append(bobInbox, [fromAlice('one')]);
    await owner.append(bobInbox, [fromAlice('two'), msg('carol', 'hi')]);
    const [p1, p2] = await pushes(push, bobInbox, 2);
    expect(p1!.convs).toEqual([expect.objectContaining({ conv: { type: 'user', id: 'alice' }, unread: 1, asOfSeq: p1!.entries[0]!.seq })]);
    expect(p2!.convs?.map((c) => [c.conv.id, c.unread])).toEqual([
      ['alice', 2],
      ['carol', 1],
    ]);
    expect(p2!.convs?.[0]).toEqual(await engine.conversations.getConversation(bobInbox, { type: 'user', id: 'alice' }));
    await owner.close();
    await engine.close();
  });

  it('an index behind the pushed entries: the push goes without convs (the client syncs), logged at debug', async () => {
    const { owner, push, engine, logger } = await setup((real) => overriding(real, { headSeq: async () => 0 }));
    await owner.append(bobInbox, [fromAlice('lagging')]);
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
          getConversation: async (i, c) => {
            const n = ++calls;
            if (n === 1) await new Promise((r) => setTimeout(r, 2000));
            if (n === 2) throw new Error('index unavailable');
            return real.getConversation(i, c);
          },
        }),
      { pushConvsWaitMs: 30 },
    );
    const started = Date.now();
    await owner.append(bobInbox, [fromAlice('slow')]);
    await owner.append(bobInbox, [fromAlice('failing')]);
    await owner.append(bobInbox, [fromAlice('fine')]);
    const got = await pushes(push, bobInbox, 3);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(got.map((p) => p.convs === undefined)).toEqual([true, true, false]);
    // In order: each push's prevSeq is the previous push's last seq.
    expect(got.map((p) => p.prevSeq)).toEqual([0, got[0]!.entries[0]!.seq, got[1]!.entries[0]!.seq]);
    expect(got[2]!.convs?.[0]?.unread).toBe(3);
    await owner.close();
    await engine.close();
  });

  it('rebuildConversations runs after the appends queued before it; without a rebuilder it is INTERNAL', async () => {
    const { owner, engine } = await setup();
    const appends = [owner.append(bobInbox, [fromAlice('a')]), owner.append(bobInbox, [fromAlice('b')])];
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
