/**
 * The CQL conversation index follows the timeline's retention (docs/decisions.md, "Conversation
 * index follows the timeline's retention"). A keyspace of its own whose `timeline` tables keep
 * entries RETENTION seconds (the store reads the TTL from the schema, as in production): once an
 * inbox's oldest entries expired, the next append moves the index to the new horizon, and the
 * index equals core's recount of the entries left and a rebuild of it — expired messages no
 * longer count as unread, a conversation whose activity all expired leaves the list — and the
 * rows of the expired entries are gone. An inbox nobody appends to again loses its index rows
 * to their TTLs; one left past the bound is rebuilt by its next append.
 */
import type { Client } from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, recountInboxIndex, type Conv, type Entry, type InboxKey, type Logger, type NewEntry } from '@seqline/core';
import { historyDeleteOf, historyEditOf, historyMsg, historyReadConv, uniqueTenant, expectIndexMatchesInbox } from '@seqline/testing';
import { migrateSchema, openScyllaStores, type ScyllaStores } from '@seqline/store/scylla';
import { CONTACT_POINTS, LOCAL_DC, newClient, requireOrSkip, scratchKeyspace, servicesAvailable } from './scylla-harness.ts';

const probe = await servicesAvailable();
const SELF = 'me';
/** Seconds an entry lives in this keyspace. */
const RETENTION = 4;
const bob: Conv = { type: 'user', id: 'bob' };
const carol: Conv = { type: 'user', id: 'carol' };
const team: Conv = { type: 'group', id: 'team' };

/** Polls `check` every 200 ms until it answers true, at most `seconds`. */
async function waitUntil(what: string, seconds: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A logger that keeps the messages it is given (the writer says when it rebuilds). */
function recordingLogger(messages: string[]): Logger {
  const keep = (_obj: object, msg?: string) => {
    if (msg !== undefined) messages.push(msg);
  };
  const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep, child: () => logger };
  return logger;
}

if (requireOrSkip(probe, 'conversation index expiry on CQL')) {
  const keyspace = scratchKeyspace('conv_expiry');
  const raw: Client = newClient();
  const messages: string[] = [];
  let stores: ScyllaStores;

  beforeAll(async () => {
    await migrateSchema(raw, { keyspace });
    for (const table of ['timeline', 'timeline_appinfos', 'timeline_readers']) {
      await raw.execute(`ALTER TABLE ${keyspace}.${table} WITH default_time_to_live = ${RETENTION}`);
    }
    stores = await openScyllaStores({
      contactPoints: CONTACT_POINTS,
      localDataCenter: LOCAL_DC,
      keyspace,
      logger: recordingLogger(messages),
    });
  }, 120_000);
  afterAll(async () => {
    await stores.close();
    await raw.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    await raw.shutdown();
  }, 60_000);

  /** The last seq given out per inbox, as its seq allocator would (expired entries take theirs along). */
  const heads = new Map<InboxKey, number>();

  /** Writes the entries (seqs after the last given out) now: their sendTime is when they are written. */
  async function append(inbox: InboxKey, entries: NewEntry[]): Promise<Entry[]> {
    let seq = heads.get(inbox) ?? 0;
    const stamped = entries.map((entry): Entry => ({ ...entry, seq: ++seq, sendTime: Date.now() }));
    heads.set(inbox, seq);
    await stores.timeline.append({ inbox, entries: stamped });
    return stamped;
  }

  async function rowsOf(table: string, inbox: InboxKey): Promise<number> {
    const result = await raw.execute(`SELECT COUNT(*) AS n FROM ${keyspace}.${table} WHERE inbox = ?`, [inbox], { prepare: true });
    return Number(result.first()?.get('n'));
  }

  async function watermarkCell(inbox: InboxKey, column: 'horizon' | 'oldest_at'): Promise<number> {
    const row = (await raw.execute(`SELECT ${column} FROM ${keyspace}.conv_watermark WHERE inbox = ?`, [inbox], { prepare: true })).first();
    return Number(row?.get(column));
  }

  const allExpired = (inbox: InboxKey) => async () => (await stores.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 })).length === 0;

  describe('conversation index on CQL: follows the timeline retention', () => {
    it('after the oldest entries expire, the next append leaves the index equal to the recount of the entries left and to a rebuild', async () => {
      const inbox = inboxKey(uniqueTenant(), SELF);
      await append(inbox, [
        historyMsg('a1', bob, 'bob'),
        historyMsg('a2', bob, 'bob'),
        historyReadConv('r1', SELF, bob, 1),
        historyMsg('a3', bob, 'bob'),
        historyMsg('c1', carol, 'carol'),
        historyMsg('t1', team, 'bob', [SELF]),
      ]);
      expect(await stores.conversations.getConversation({ inbox, conv: bob })).toMatchObject({ unread: 2, readSeq: 1 });
      await waitUntil('the first entries expire', 4 * RETENTION, allExpired(inbox));

      const seen = messages.length;
      const after = await append(inbox, [historyMsg('b1', bob, 'bob'), historyMsg('t2', team, 'carol')]);
      // The index is the recount of what is left: carol's chat is gone, bob counts b1 only, the mention expired.
      await expectIndexMatchesInbox(stores, inbox, SELF, 2);
      const list = await stores.conversations.listConversations({ inbox, limit: 10 });
      expect(list.convs.map((c) => [c.conv.id, c.unread, c.mentions, c.readSeq])).toEqual([
        ['team', 1, 0, 0],
        ['bob', 1, 0, 0],
      ]);
      // Moved, not rebuilt: the horizon is the oldest entry left.
      expect(messages.slice(seen).filter((m) => m.includes('rebuil'))).toEqual([]);
      expect(await watermarkCell(inbox, 'horizon')).toBe(after[0]?.seq);
      // Records, list and unread rows of the expired entries went with the move.
      const left = recountInboxIndex(await stores.timeline.readAfter({ inbox, afterSeq: 0, limit: 100 }), SELF);
      expect(await rowsOf('conv_records', inbox)).toBe(left.records.size);
      expect(await rowsOf('conv_list', inbox)).toBe(left.records.size);
      expect(await rowsOf('conv_unread', inbox)).toBe(left.unread.size);
      const report = await stores.timeline.rebuildConversations({ inbox });
      expect(report).toMatchObject({ differed: false, changedConversations: [], conversations: 2, headSeq: after.at(-1)?.seq });
      expect(await stores.conversations.listConversations({ inbox, limit: 10 })).toEqual(list);
    }, 60_000);

    it('an inbox nobody appends to again: every index row expires by its TTL', async () => {
      const inbox = inboxKey(uniqueTenant(), SELF);
      const [a1] = await append(inbox, [historyMsg('a1', bob, 'bob'), historyMsg('a2', carol, 'carol')]);
      await append(inbox, [historyDeleteOf('d1', SELF, [a1?.seq ?? 0]), historyEditOf(a1 as Entry, 'bob', Date.now(), 'fixed')]);
      const itemTables = ['conv_visible', 'conv_deleted', 'conv_edits'];
      const stateTables = ['conv_records', 'conv_list', 'conv_unread', 'conv_watermark'];
      for (const table of [...itemTables, ...stateTables]) expect(await rowsOf(table, inbox), table).toBeGreaterThan(0);
      const empty = (tables: string[]) => async () =>
        (await Promise.all(tables.map((table) => rowsOf(table, inbox)))).every((n) => n === 0);
      // Items as long as entries, the rest twice as long.
      await waitUntil('visible, deleted and edit rows expire', 4 * RETENTION, empty(itemTables));
      await waitUntil('records, list, unread rows and the watermark expire', 6 * RETENTION, empty(stateTables));
    }, 60_000);

    it('an index left longer than the retention allows is rebuilt before the next append is indexed', async () => {
      const inbox = inboxKey(uniqueTenant(), SELF);
      await append(inbox, [historyMsg('a1', bob, 'bob'), historyMsg('a2', carol, 'carol')]);
      // The rows of what the index counts live twice the retention past its oldest entry.
      const oldestAt = () => watermarkCell(inbox, 'oldest_at');
      const since = await oldestAt();
      expect(since).toBeGreaterThan(0);
      await waitUntil('twice the retention passes', 6 * RETENTION, async () => Date.now() - since > 2 * RETENTION * 1000);
      const seen = messages.length;

      await append(inbox, [historyMsg('b1', bob, 'bob')]);
      expect(messages.slice(seen)).toContain('conversation index: rows of expired entries may be gone uncounted; rebuilding');
      await expectIndexMatchesInbox(stores, inbox, SELF, 2);
      expect((await stores.conversations.listConversations({ inbox, limit: 10 })).convs.map((c) => [c.conv.id, c.unread])).toEqual([
        ['bob', 1],
      ]);
      expect(await oldestAt()).toBeGreaterThan(since);
    }, 60_000);
  });
}
