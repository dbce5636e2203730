/**
 * LmdbConversationRebuilder (engine.conversationRebuilder): rebuilding an inbox's conversation
 * index from the inbox. A correct index is reported as such and left byte for byte; an index
 * tampered with behind the engine's back (a record, an item's unread flag, the list order, all
 * rows dropped) is reported with the conversations that differed and afterwards equals core's
 * recount again; a rebuild racing appends ends exact at the head. And the fault contract: the
 * k-th index write of a rebuild failing (scratch, copy, switch, clear), for every k, leaves the
 * live index as it was or switched whole. Bounds and progress: conversation-rebuild-bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { open, type Key } from 'lmdb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { conversationKey, inboxKey, recountInboxIndex, type Entry, type InboxKey } from '@seqline/core';
import {
  conversationRebuildFaultContract,
  defaultCast,
  historyEntryFor,
  historyMsg,
  historyOpArb,
  uniqueName,
  WriteFaults,
} from '@seqline/testing';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { ConversationRows } from '../src/embedded/conversation-dbs.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-conv-rebuild-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SELF = 'me';
const CAST = defaultCast(SELF);
const bob = { type: 'user', id: 'bob' } as const;

/** Appends a random history (seeded) in batches of 7; returns the entries stored. */
async function fillInbox(engine: EmbeddedEngine, inbox: InboxKey, seed: number): Promise<Entry[]> {
  const ops = fc.sample(historyOpArb(CAST), { numRuns: 120, seed });
  const stored: Entry[] = [];
  let batch: Entry[] = [];
  for (const [n, op] of ops.entries()) {
    const input = historyEntryFor(op, CAST, stored, stored.length, n);
    if (input === null || stored.some((e) => e.appinfo === input.appinfo)) continue;
    const entry: Entry = { ...input, seq: stored.length + 1 };
    stored.push(entry);
    batch.push(entry);
    if (batch.length === 7) {
      await engine.timeline.append({ inbox, entries: batch });
      batch = [];
    }
  }
  if (batch.length > 0) await engine.timeline.append({ inbox, entries: batch });
  return stored;
}

/** The index answers what core's recount of the stored inbox says (records, list order, watermark). */
async function expectMatchesRecount(engine: EmbeddedEngine, inbox: InboxKey): Promise<void> {
  const entries = await engine.timeline.readAfter({ inbox, afterSeq: 0, limit: 100_000 });
  const recount = recountInboxIndex(entries, SELF);
  for (const rec of recount.records.values()) {
    const got = await engine.conversations.getConversation({ inbox, conv: rec.conv });
    expect(got, conversationKey(rec.conv)).toMatchObject(rec);
  }
  const listed = await engine.conversations.listConversations({ inbox, limit: 500 });
  const order = [...recount.records.values()].sort((a, b) => b.lastSeq - a.lastSeq).map((r) => conversationKey(r.conv));
  expect(listed.convs.map((c) => conversationKey(c.conv))).toEqual(order);
  expect(await engine.conversations.headSeq(inbox)).toBe(await engine.timeline.headSeq(inbox));
}

type RawRows = ReturnType<typeof openRaw>['rows'];
function openRaw(dir: string) {
  const env = open({ path: dir, noSubdir: false, maxDbs: 40 });
  return { env, rows: env.openDB<unknown, Key>({ name: 'conv_index' }) };
}

function rowsOf(rows: RawRows, inbox: InboxKey): Array<[Key, unknown]> {
  return Array.from(rows.getRange({ start: [inbox], end: [inbox, '\u{10FFFF}'] }), ({ key, value }) => [key, value]);
}

/** Closes the engine, edits the stored rows, reopens. */
async function tamper(dir: string, engine: EmbeddedEngine, edit: (rows: RawRows) => Promise<void>): Promise<EmbeddedEngine> {
  await engine.close();
  const raw = openRaw(dir);
  try {
    await edit(raw.rows);
  } finally {
    await raw.env.close();
  }
  return openEmbeddedEngine({ dir });
}

describe('conversation rebuild on LMDB', () => {
  it('reports a correct index as such and changes nothing', async () => {
    const dir = join(root, uniqueName('correct'));
    const inbox = inboxKey('t', SELF);
    let engine = await openEmbeddedEngine({ dir });
    const stored = await fillInbox(engine, inbox, 11);
    await engine.close();
    let raw = openRaw(dir);
    const before = rowsOf(raw.rows, inbox);
    await raw.env.close();
    engine = await openEmbeddedEngine({ dir });
    const report = await engine.conversationRebuilder.rebuildConversations(inbox);
    const recount = recountInboxIndex(stored, SELF);
    expect(report).toEqual({
      differed: false,
      changedConversations: [],
      conversations: recount.records.size,
      entries: stored.length,
      headSeq: stored.length,
    });
    await engine.close();
    raw = openRaw(dir);
    expect(rowsOf(raw.rows, inbox)).toEqual(before);
    await raw.env.close();
  });

  it.each([11, 12, 13])('repairs a tampered record, unread flag and list order (history seed %i)', async (seed) => {
    const dir = join(root, uniqueName('tampered'));
    const inbox = inboxKey('t', SELF);
    let engine = await openEmbeddedEngine({ dir });
    await fillInbox(engine, inbox, seed);
    await engine.timeline.append({ inbox, entries: [{ ...historyMsg('late-1', bob, 'bob'), seq: 500 }] });
    engine = await tamper(dir, engine, async (rows) => {
      const rec = rows.get([inbox, 'r', 'user:bob']) as number[];
      // unread + 3: the count a drifting index would show.
      await rows.put(
        [inbox, 'r', 'user:bob'],
        rec.map((n, i) => (i === 4 ? n + 3 : n)),
      );
      // bob's newest message stops counting as unread; a bogus list row points at carol.
      await rows.put([inbox, 'i', 'user:bob', 500], 0);
      await rows.put([inbox, 'o', 499], 'user:carol');
    });
    expect((await engine.conversations.getConversation({ inbox, conv: bob }))?.unread).toBeGreaterThanOrEqual(3);
    const report = await engine.conversationRebuilder.rebuildConversations(inbox);
    expect(report.differed).toBe(true);
    expect(report.changedConversations).toEqual(expect.arrayContaining(['user:bob', 'user:carol']));
    expect(report.headSeq).toBe(500);
    await expectMatchesRecount(engine, inbox);
    expect((await engine.conversationRebuilder.rebuildConversations(inbox)).differed).toBe(false);
    await engine.close();
  });

  it('rebuilds an index whose rows were all dropped, and appends continue on it', async () => {
    const dir = join(root, uniqueName('dropped'));
    const inbox = inboxKey('t', SELF);
    let engine = await openEmbeddedEngine({ dir });
    const stored = await fillInbox(engine, inbox, 21);
    engine = await tamper(dir, engine, async (rows) => {
      for (const key of rows.getKeys({ start: [inbox], end: [inbox, '\u{10FFFF}'] })) await rows.remove(key);
    });
    const report = await engine.conversationRebuilder.rebuildConversations(inbox);
    const convs = [...recountInboxIndex(stored, SELF).records.keys()].sort();
    expect(report).toMatchObject({ differed: true, changedConversations: convs, headSeq: stored.length });
    await expectMatchesRecount(engine, inbox);
    await engine.timeline.append({ inbox, entries: [{ ...historyMsg('after', bob, 'bob'), seq: stored.length + 1 }] });
    await expectMatchesRecount(engine, inbox);
    await engine.close();
  });

  it('runs serialised with concurrent appends: the index ends exact at the head', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, uniqueName('racing')) });
    const inbox = inboxKey('t', SELF);
    const appends = Array.from({ length: 20 }, (_, i) =>
      engine.timeline.append({
        inbox,
        entries: [{ ...historyMsg(`r${i}`, i % 3 === 0 ? bob : CAST.convs[1]!, i % 2 === 0 ? SELF : 'bob'), seq: i + 1 }],
      }),
    );
    const reports = await Promise.all([engine.conversationRebuilder.rebuildConversations(inbox), ...appends]);
    expect(reports[0]).toMatchObject({ differed: false });
    await expectMatchesRecount(engine, inbox);
    expect(await engine.conversationRebuilder.rebuildConversations(inbox)).toMatchObject({ differed: false, headSeq: 20, entries: 20 });
    await engine.close();
  });

  it('an empty inbox rebuilds to an empty index', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, uniqueName('empty')) });
    const report = await engine.conversationRebuilder.rebuildConversations(inboxKey('t', 'nobody'));
    expect(report).toEqual({ differed: false, changedConversations: [], conversations: 0, entries: 0, headSeq: 0 });
    await engine.close();
  });
});

/** Every index write (each write method of ConversationRows, in whichever space) goes through `faults`. */
const ROW_WRITES = [
  'putRecord',
  'putOrder',
  'removeOrder',
  'putItem',
  'removeItem',
  'putDeleted',
  'putEdit',
  'putWatermark',
  'removeWatermark',
  'putRow',
  'removeRow',
  'makeLive',
] as const;

function wrapRowWrites(faults: WriteFaults): () => void {
  const spies = ROW_WRITES.map((method) => {
    const original = ConversationRows.prototype[method] as (this: ConversationRows, ...args: unknown[]) => void;
    return vi.spyOn(ConversationRows.prototype, method).mockImplementation(function (this: ConversationRows, ...args: unknown[]) {
      faults.writeSync(() => original.apply(this, args));
    });
  });
  return () => spies.forEach((spy) => spy.mockRestore());
}

conversationRebuildFaultContract(
  'LMDB',
  async () => {
    const dir = join(root, uniqueName('faults'));
    let engine = await openEmbeddedEngine({ dir });
    const faults = new WriteFaults();
    const unwrap = wrapRowWrites(faults);
    return {
      stores: () => ({ timeline: engine.timeline, conversations: engine.conversations }),
      rebuild: (inbox) => engine.conversationRebuilder.rebuildConversations(inbox),
      dropIndex: async (inbox) => {
        engine = await tamper(dir, engine, async (rows) => {
          for (const key of rows.getKeys({ start: [inbox], end: [inbox, '\u{10FFFF}'] })) await rows.remove(key);
        });
      },
      faults,
      close: async () => {
        unwrap();
        await engine.close();
      },
    };
  },
  { messages: 12, minWriteSteps: 10, timeoutMs: 120_000 },
);
