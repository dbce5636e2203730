/**
 * The ConversationIndex contract over the embedded LMDB engine, plus what only LMDB promises:
 * the index is written in the append's own transaction, so an append the index refuses stores
 * nothing (entries included) and leaves the appends batched with it alone, and an index that is
 * behind its inbox (dropped for a rebuild) is caught up by the next append.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Key } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { BadRequestError, InternalError, inboxKey, type Entry } from '@seqline/core';
import { conversationIndexContract, historyMsg, msgEntry, msgKey, uniqueName, type StoreOpener } from '@seqline/testing';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';

const root = mkdtempSync(join(tmpdir(), 'seqline-conversations-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const opener: StoreOpener<Pick<EmbeddedEngine, 'timeline' | 'conversations'>> = async (dataKey) => {
  const engine = await openEmbeddedEngine({ dir: join(root, dataKey) });
  return { store: engine, close: () => engine.close() };
};

conversationIndexContract('embedded LMDB', opener);

const bob = { type: 'user', id: 'bob' } as const;
const message = (seq: number, appinfo: string, from = 'bob'): Entry => ({ ...historyMsg(appinfo, bob, from), seq });

/** Edits the index tables behind the engine's back (the engine is closed meanwhile). */
async function withRawEnv(dir: string, edit: (env: ReturnType<typeof open>) => Promise<void>): Promise<void> {
  const env = open({ path: dir, noSubdir: false, maxDbs: 40 });
  try {
    await edit(env);
  } finally {
    await env.close();
  }
}

describe('conversation index on LMDB', () => {
  it('an append the index refuses fails whole, inside a shared commit, and the others still commit', async () => {
    const dir = join(root, uniqueName('refused'));
    const inbox = inboxKey('t', 'me');
    const other = inboxKey('t', 'other');
    let engine = await openEmbeddedEngine({ dir });
    await engine.timeline.append({ inbox, entries: [message(1, 'm1')] });
    await engine.close();
    // A record ahead of its inbox (asOfSeq 50): core refuses to apply seq 2 on top of it.
    await withRawEnv(dir, async (env) => {
      // A record row is its numbers [lastSeq, lastMsgSeq, readSeq, clearedSeq, unread, mentions, asOfSeq].
      const rows = env.openDB<number[], Key>({ name: 'conv_index' });
      const rec = rows.get([inbox, 'r', 'user:bob']) as number[];
      await rows.put([inbox, 'r', 'user:bob'], [...rec.slice(0, 6), 50]);
    });
    engine = await openEmbeddedEngine({ dir });
    const [refused, fine] = await Promise.allSettled([
      engine.timeline.append({ inbox, entries: [message(2, 'm2'), message(3, 'm3')] }),
      engine.timeline.append({ inbox: other, entries: [message(1, 'o1')] }),
    ]);
    expect(refused.status === 'rejected' && refused.reason).toBeInstanceOf(InternalError);
    expect(fine.status).toBe('fulfilled');
    expect(await engine.timeline.headSeq(inbox)).toBe(1);
    expect(await engine.timeline.findSeqs({ inbox, keys: [msgKey('m2'), msgKey('m3')] })).toEqual(new Map());
    expect(await engine.conversations.headSeq(inbox)).toBe(1);
    expect((await engine.conversations.getConversation({ inbox, conv: bob }))?.lastSeq).toBe(1);
    expect(await engine.conversations.headSeq(other)).toBe(1);
    await engine.close();
  });

  it('a conversation id no key can hold is BAD_REQUEST and stores nothing', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, uniqueName('long-id')) });
    const inbox = inboxKey('t', 'me');
    const long: Entry = { ...msgEntry(2, 'long'), conv: { type: 'user', id: 'x'.repeat(600) } };
    await expect(engine.timeline.append({ inbox, entries: [message(1, 'ok'), long] })).rejects.toBeInstanceOf(BadRequestError);
    expect(await engine.timeline.headSeq(inbox)).toBe(0);
    expect(await engine.conversations.headSeq(inbox)).toBe(0);
    expect(await engine.conversations.getConversation({ inbox, conv: long.conv })).toBeNull();
    await engine.close();
  });

  it('an index dropped for a rebuild is caught up from the inbox by the next append', async () => {
    const dir = join(root, uniqueName('behind'));
    const inbox = inboxKey('t', 'me');
    let engine = await openEmbeddedEngine({ dir });
    await engine.timeline.append({ inbox, entries: [message(1, 'm1'), message(2, 'm2', 'me'), message(3, 'm3')] });
    const exact = await engine.conversations.getConversation({ inbox, conv: bob });
    await engine.close();
    await withRawEnv(dir, async (env) => {
      const rows = env.openDB<unknown, Key>({ name: 'conv_index' });
      for (const key of rows.getKeys({ start: [inbox], end: [inbox, '\u{10FFFF}'] })) await rows.remove(key);
    });
    engine = await openEmbeddedEngine({ dir });
    expect(await engine.conversations.headSeq(inbox)).toBe(0);
    await engine.timeline.append({ inbox, entries: [message(4, 'm4')] });
    expect(await engine.conversations.headSeq(inbox)).toBe(4);
    const now = await engine.conversations.getConversation({ inbox, conv: bob });
    expect(now).toMatchObject({ readSeq: exact?.readSeq, unread: 2, lastSeq: 4, asOfSeq: 4 });
    await engine.close();
  });
});
