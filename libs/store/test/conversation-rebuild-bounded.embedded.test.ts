/**
 * The LMDB conversation index's big jobs stay bounded: a rebuild of a 50 000-entry inbox and
 * the catch-up of an index dropped under a 20 000-entry inbox read the inbox a chunk at a time
 * (at most INDEX_CHUNK_ENTRIES entries read between two index writes, counted by a wrapper
 * around the inbox log's range reads), and another inbox's append completes while they run
 * (started from inside the job's first read, no sleep). Appends to the same inbox made during a
 * rebuild — while it folds, and while it holds the inbox — end up in the rebuilt index, in order.
 *
 * The parts are wired as the engine wires them (conversationIndexParts), over an LMDB of the
 * test's own so that its log can be instrumented.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  buildRecallEntry,
  conversationKey,
  inboxKey,
  recountInboxIndex,
  silentLogger,
  type Entry,
  type InboxKey,
  type NewEntry,
} from '@seqline/core';
import { historyMsg, historyReadConv, uniqueName } from '@seqline/testing';
import { INDEX_CHUNK_ENTRIES } from '../src/embedded/conversation-chunks.ts';
import { ConversationRows, type InboxLogDbs } from '../src/embedded/conversation-dbs.ts';
import { conversationIndexParts, type ConversationIndexParts } from '../src/embedded/conversation-parts.ts';
import { SeqLog } from '../src/embedded/seq-log.ts';
import { WriteBatcher } from '../src/embedded/write-batcher.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-bounded-rebuild-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SELF = 'owner';
const BIG = inboxKey('t', SELF);
const OTHER = inboxKey('t', 'someone-else');
const CONVERSATIONS = 40;
const FILL_BATCH = 5_000;
const peerOf = (i: number) => ({ type: i % 4 === 0 ? 'group' : 'user', id: `c${i}` }) as const;

/**
 * Entry `seq` of a long mixed history: messages over 40 conversations, one in five the owner's,
 * one in fifty mentioning the owner, and now and then a read of a conversation or a recall of
 * the owner's previous message.
 */
function historyEntry(seq: number, earlier: readonly Entry[]): Entry {
  const n = (seq * 2654435761) >>> 0;
  const conv = peerOf(n % CONVERSATIONS);
  let entry: NewEntry;
  const target = earlier.at(-3);
  if (seq % 97 === 0) entry = historyReadConv(`read-${seq}`, SELF, conv, seq - 1);
  else if (seq % 211 === 0 && target?.kind === 'msg' && target.from === SELF) entry = buildRecallEntry(target, SELF, 1_700_000_100_000);
  else entry = historyMsg(`m-${seq}`, conv, n % 5 === 0 ? SELF : conv.id, n % 50 === 1 ? [SELF] : undefined);
  return { ...entry, seq };
}

/** Counts the entries of BIG its log's range reads hand out, and tells of the first one once armed. */
class ReadMeter {
  sinceWrite = 0;
  maxSinceWrite = 0;
  total = 0;
  private onRead: (() => void) | undefined;

  constructor(log: InboxLogDbs) {
    const getRange = log.entries.getRange.bind(log.entries);
    vi.spyOn(log.entries, 'getRange').mockImplementation((options) => {
      const range = getRange(options);
      const start = options?.start as [string, number] | undefined;
      // getKeys is getRange without values (a head seek): keys only, no entry read.
      if (start?.[0] !== BIG || (options as { values?: boolean } | undefined)?.values === false) return range;
      return range.map((row) => {
        this.sinceWrite++;
        this.total++;
        this.maxSinceWrite = Math.max(this.maxSinceWrite, this.sinceWrite);
        const tell = this.onRead;
        this.onRead = undefined;
        tell?.();
        return row;
      });
    });
  }

  /** Resolves at the next entry of BIG read (from inside the job reading it). */
  nextRead(): Promise<void> {
    return new Promise((resolve) => (this.onRead = resolve));
  }

  /** Counts from zero again (after the fill). */
  reset(): void {
    this.sinceWrite = 0;
    this.maxSinceWrite = 0;
    this.total = 0;
  }
}

interface Rig {
  env: RootDatabase;
  log: InboxLogDbs;
  rowsDb: Database<unknown, Key>;
  parts: ConversationIndexParts;
  seqLog: SeqLog<unknown>;
  meter: ReadMeter;
}

let rig: Rig | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await rig?.parts.chunks.stop();
  await rig?.env.close();
  rig = undefined;
});

function openRig(): Rig {
  const dir = join(root, uniqueName('rig'));
  const env: RootDatabase = open({ path: dir, noSubdir: false, maxDbs: 4 });
  const log: InboxLogDbs = { entries: env.openDB({ name: 'timeline' }), appinfos: env.openDB({ name: 'timeline_appinfo' }) };
  const rowsDb = env.openDB<unknown, Key>({ name: 'conv_index' });
  const writes = new WriteBatcher(env);
  const parts = conversationIndexParts({ db: rowsDb, log, writes, logger: silentLogger, scratchRoot: join(dir, 'scratch') });
  const meter = new ReadMeter(log);
  const seqLog = new SeqLog(log, writes, parts.writer);
  // Every index write of BIG (an append's, a chunk's, in the engine or a rebuild's scratch) ends with
  // its watermark: what was read before it is no longer held.
  const putWatermark = ConversationRows.prototype.putWatermark;
  vi.spyOn(ConversationRows.prototype, 'putWatermark').mockImplementation(function (this: ConversationRows, inbox, seq) {
    if (inbox === BIG) meter.sinceWrite = 0;
    putWatermark.call(this, inbox, seq);
  });
  return { env, log, rowsDb, parts, seqLog, meter };
}

async function fill(r: Rig, entries: number): Promise<Entry[]> {
  const stored: Entry[] = [];
  for (let from = 1; from <= entries; from += FILL_BATCH) {
    const batch: Entry[] = [];
    for (let seq = from; seq < from + FILL_BATCH && seq <= entries; seq++) {
      const entry = historyEntry(seq, stored);
      stored.push(entry);
      batch.push(entry);
    }
    await r.seqLog.append(BIG, batch);
  }
  return stored;
}

/** The index answers what core's recount of the stored inbox says: every record, the list order, the watermark. */
async function expectIndexIsRecount(r: Rig, inbox: InboxKey): Promise<void> {
  const entries = await r.seqLog.readAfter(inbox, 0, 1_000_000);
  const recount = recountInboxIndex(entries, SELF);
  for (const rec of recount.records.values()) {
    expect(await r.parts.index.getConversation({ inbox, conv: rec.conv }), conversationKey(rec.conv)).toMatchObject(rec);
  }
  const listed = await r.parts.index.listConversations({ inbox, limit: 500 });
  const order = [...recount.records.values()].sort((a, b) => b.lastSeq - a.lastSeq).map((rec) => conversationKey(rec.conv));
  expect(listed.convs.map((c) => conversationKey(c.conv))).toEqual(order);
  expect(await r.parts.index.headSeq(inbox)).toBe(entries.at(-1)?.seq ?? 0);
}

/** Settles `promise` into a flag the test can read while it runs. */
function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const done = () => {
    settled = true;
  };
  promise.then(done, done);
  return { promise, settled: () => settled };
}

describe('bounded conversation index jobs on LMDB', () => {
  it(`a rebuild of a 50 000-entry inbox holds at most ${INDEX_CHUNK_ENTRIES} of its entries at once; another inbox's append completes meanwhile`, async () => {
    const r = (rig = openRig());
    const stored = await fill(r, 50_000);
    // Drift, behind the writer's back: c1's unread count is off by 5.
    const wrong = r.parts.rows.record(BIG, 'user:c1');
    if (wrong === undefined) throw new Error('no record for c1');
    await r.env.transaction(() => r.parts.rows.putRecord(BIG, 'user:c1', { ...wrong, unread: wrong.unread + 5 }));

    r.meter.reset();
    const firstRead = r.meter.nextRead();
    const rebuild = track(r.parts.rebuilder.rebuildConversations(BIG));
    await firstRead;
    await r.seqLog.append(OTHER, [{ ...historyMsg('hello', { type: 'user', id: SELF }, SELF), seq: 1 }]);
    expect(rebuild.settled(), 'rebuild finished before the other inbox was written').toBe(false);

    const report = await rebuild.promise;
    expect(report).toEqual({
      differed: true,
      changedConversations: ['user:c1'],
      conversations: CONVERSATIONS,
      entries: stored.length,
      headSeq: stored.length,
    });
    expect(r.rowsDb.get([BIG, 'g']), 'one row off: patched in place, no switch').toBeUndefined();
    expect(r.meter.total).toBeGreaterThanOrEqual(stored.length);
    expect(r.meter.maxSinceWrite).toBeLessThanOrEqual(INDEX_CHUNK_ENTRIES);
    await expectIndexIsRecount(r, BIG);
    expect((await r.parts.index.listConversations({ inbox: OTHER, limit: 10 })).convs).toHaveLength(1);
  }, 180_000);

  it('appends to the inbox while it is rebuilt, folding and held, are in the rebuilt index (copied and switched), in order', async () => {
    const r = (rig = openRig());
    const stored = await fill(r, 10 * INDEX_CHUNK_ENTRIES);
    // Every item row lost, behind the writer's back: more rows differ than a rebuild patches in place.
    await r.env.transaction(() => {
      for (const key of r.rowsDb.getKeys({ start: [BIG, 'i'], end: [BIG, 'i', '\u{10FFFF}'] })) void r.rowsDb.remove(key);
    });
    const at = (seq: number, entry: NewEntry): Entry => ({ ...entry, seq });
    let head = stored.length;

    const firstRead = r.meter.nextRead();
    const rebuild = track(r.parts.rebuilder.rebuildConversations(BIG));
    await firstRead;
    // While the rebuild folds: straight into the live index. Both are queued before the chunk's write.
    const during = [
      r.seqLog.append(BIG, [at(++head, historyMsg('during-1', peerOf(1), 'c1')), at(++head, historyMsg('during-2', peerOf(2), SELF))]),
      r.seqLog.append(BIG, [at(++head, historyReadConv('during-read', SELF, peerOf(1), head - 1))]),
    ];
    await Promise.all(during);
    expect(rebuild.settled()).toBe(false);
    // The next read while the inbox is held is the rebuild's last chunk: these wait, in call order.
    for (;;) {
      await r.meter.nextRead();
      if (r.parts.chunks.held(BIG) !== undefined) break;
    }
    const heldAppends = [1, 2, 3].map((i) => track(r.seqLog.append(BIG, [at(++head, historyMsg(`held-${i}`, peerOf(3), 'c3'))])));
    const report = await rebuild.promise;
    expect(report).toMatchObject({ differed: true, headSeq: stored.length + 3 });
    expect(report.changedConversations).toHaveLength(CONVERSATIONS);
    expect(r.rowsDb.get([BIG, 'g']), 'switched to space 1').toBe(1);
    for (const append of heldAppends) await append.promise;
    await expectIndexIsRecount(r, BIG);
    expect(await r.seqLog.headSeq(BIG)).toBe(stored.length + 6);
    // The switched index keeps taking appends, and a second rebuild finds nothing to repair.
    await r.seqLog.append(BIG, [at(++head, historyMsg('after', peerOf(5), 'c5'))]);
    await expectIndexIsRecount(r, BIG);
    expect(await r.parts.rebuilder.rebuildConversations(BIG)).toMatchObject({ differed: false, headSeq: head });
  }, 120_000);

  it(`an index dropped under a 20 000-entry inbox is caught up ${INDEX_CHUNK_ENTRIES} entries at a time; its appends wait in order, another inbox's do not`, async () => {
    const r = (rig = openRig());
    const stored = await fill(r, 20_000);
    // Dropped behind the writer's back, then the process "restarts": a writer that remembers nothing.
    await r.env.transaction(() => {
      for (const key of r.rowsDb.getKeys({ start: [BIG], end: [BIG, '\u{10FFFF}'] })) void r.rowsDb.remove(key);
    });
    r.parts.writer.forget(BIG);
    expect(await r.parts.index.headSeq(BIG)).toBe(0);

    r.meter.reset();
    const firstRead = r.meter.nextRead();
    let head = stored.length;
    const first = track(r.seqLog.append(BIG, [{ ...historyMsg('wakes-it', peerOf(7), 'c7'), seq: ++head }]));
    await firstRead;
    const second = track(r.seqLog.append(BIG, [{ ...historyMsg('right-after', peerOf(7), 'c7'), seq: ++head }]));
    await r.seqLog.append(OTHER, [{ ...historyMsg('hello', { type: 'user', id: SELF }, SELF), seq: 1 }]);
    expect(first.settled(), 'the catch-up finished before the other inbox was written').toBe(false);
    await first.promise;
    await second.promise;
    expect(r.meter.total).toBeGreaterThanOrEqual(stored.length);
    expect(r.meter.maxSinceWrite).toBeLessThanOrEqual(INDEX_CHUNK_ENTRIES);
    await expectIndexIsRecount(r, BIG);
    expect(await r.parts.index.headSeq(BIG)).toBe(stored.length + 2);
  }, 180_000);
});
