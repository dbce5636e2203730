/**
 * The LMDB conversation index writer remembers the watermarks it wrote so an append need not
 * read its inbox's row, but only for a bounded number of inboxes (least recently written go
 * first): writing more inboxes than the bound keeps the memo at the bound, and an inbox it forgot
 * has its watermark read back from LMDB and is indexed exactly as the recount says.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Key, type RootDatabase } from 'lmdb';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { inboxKey, recountConversations, splitKey, type Entry, type InboxKey } from '@seqline/core';
import { msgEntry, uniqueName } from '@seqline/testing';
import { ConversationRows, type InboxLogDbs } from '../src/embedded/conversation-dbs.ts';
import { LmdbConversationIndexWriter } from '../src/embedded/conversation-writer.ts';
import { LmdbConversationIndex } from '../src/embedded/conversation-index.ts';
import { SeqLog } from '../src/embedded/seq-log.ts';
import { WriteBatcher } from '../src/embedded/write-batcher.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-watermarks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const BOUND = 3;
const INBOXES = 10;

/** The engine's inbox log and index on real LMDB, with a writer remembering at most BOUND watermarks. */
function openRig() {
  const env: RootDatabase = open({ path: join(root, uniqueName('rig')), noSubdir: false, maxDbs: 4 });
  const log: InboxLogDbs = { entries: env.openDB({ name: 'timeline' }), appinfos: env.openDB({ name: 'timeline_appinfo' }) };
  const rowsDb = env.openDB<unknown, Key>({ name: 'conv_index' });
  const rows = new ConversationRows(rowsDb as ConstructorParameters<typeof ConversationRows>[0]);
  const writer = new LmdbConversationIndexWriter(rows, log, BOUND);
  const seqLog = new SeqLog(log, new WriteBatcher(env), writer);
  const index = new LmdbConversationIndex(rows, log);
  return { env, rowsDb, rows, writer, seqLog, index };
}
type Rig = ReturnType<typeof openRig>;

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.env.close();
  rig = undefined;
});

const inboxes = Array.from({ length: INBOXES }, (_, i) => inboxKey('t', `u${i}`));

/** bob writes twice, the owner answers once (which reads bob's first), bob writes again: unread 1. */
function history(inbox: InboxKey, from: number): Entry[] {
  const self = splitKey(inbox).id;
  return [msgEntry(from, `b${from}`), msgEntry(from + 1, `own${from}`, { from: self }), msgEntry(from + 2, `b${from + 2}`)];
}

/** Every record the index holds for the inbox equals core's recount of the inbox as stored. */
async function expectIndexEqualsRecount(r: Rig, inbox: InboxKey): Promise<void> {
  const entries = await r.seqLog.readAfter(inbox, 0, 1000);
  const records = recountConversations(entries, splitKey(inbox).id);
  expect(records.size).toBeGreaterThan(0);
  for (const rec of records.values()) expect(await r.index.getConversation({ inbox, conv: rec.conv })).toMatchObject(rec);
  const listed = await r.index.listConversations({ inbox, limit: 100 });
  expect(listed.convs).toHaveLength(records.size);
  expect(await r.index.headSeq(inbox)).toBe(entries.at(-1)?.seq);
}

describe('conversation index writer on LMDB: remembered watermarks', () => {
  it(`writing ${INBOXES} inboxes remembers at most ${BOUND} watermarks`, async () => {
    const r = (rig = openRig());
    for (const inbox of inboxes) {
      await r.seqLog.append(inbox, history(inbox, 1));
      expect(r.writer.rememberedWatermarks).toBeLessThanOrEqual(BOUND);
    }
    expect(r.writer.rememberedWatermarks).toBe(BOUND);
    for (const inbox of inboxes) await expectIndexEqualsRecount(r, inbox);
  });

  it('a forgotten inbox has its watermark read from LMDB and indexes exactly; a remembered one reads nothing', async () => {
    const r = (rig = openRig());
    for (const inbox of inboxes) await r.seqLog.append(inbox, history(inbox, 1));
    const [oldest] = inboxes;
    const newest = inboxes.at(-1);
    if (oldest === undefined || newest === undefined) throw new Error('no inboxes');
    const reads = vi.spyOn(r.rows, 'watermark');

    await r.seqLog.append(newest, history(newest, 4));
    expect(reads).not.toHaveBeenCalled();

    const { derived } = await r.seqLog.appendDerived(oldest, history(oldest, 4));
    expect(reads.mock.calls).toEqual([[oldest]]);
    expect(derived?.watermark).toBe(6);
    await expectIndexEqualsRecount(r, oldest);
    await expectIndexEqualsRecount(r, newest);
    expect(r.writer.rememberedWatermarks).toBe(BOUND);
  });

  it('a forgotten inbox whose index rows were dropped is caught up from its whole log by the next append', async () => {
    const r = (rig = openRig());
    for (const inbox of inboxes) await r.seqLog.append(inbox, history(inbox, 1));
    const forgotten = inboxes[1];
    if (forgotten === undefined) throw new Error('no inbox');
    // Behind the writer's back, as a rebuild's drop would leave them: the stored watermark is 0 again.
    for (const key of r.rowsDb.getKeys({ start: [forgotten], end: [forgotten, '\u{10FFFF}'] })) await r.rowsDb.remove(key);
    expect(await r.index.headSeq(forgotten)).toBe(0);

    // One more message from bob: unread 2 (seqs 3 and 4) only if the catch-up counted seq 3.
    await r.seqLog.append(forgotten, [msgEntry(4, 'b4')]);
    await expectIndexEqualsRecount(r, forgotten);
    expect(await r.index.getConversation({ inbox: forgotten, conv: { type: 'user', id: 'bob' } })).toMatchObject({ unread: 2, lastSeq: 4 });
  });
});
