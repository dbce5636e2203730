/**
 * The CQL conversation index's big jobs stay bounded: the catch-up of an inbox nobody indexed
 * and the admin rebuild read the inbox a page of at most PAGE entries at a time (counted by a
 * wrapper around the index's view of the inbox), and the rebuild reads the stored index a page
 * of at most PAGE rows at a time (counted on the driver client: every page of a SELECT on an
 * index table). The inbox mixes what makes a page look below itself — recalls and edits of
 * messages pages back, deletes of earlier seqs, reads — and the index left is core's recount.
 */
import type { Client, types } from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  conversationKey,
  inboxKey,
  seqWriteTimestamp,
  silentLogger,
  type Entry,
  type InboxKey,
  type InboxPageAfter,
  type NewEntry,
} from '@seqline/core';
import {
  historyDeleteOf,
  historyEditOf,
  historyMsg,
  historyReadConv,
  historyRecallOf,
  uniqueTenant,
  expectIndexMatchesInbox,
} from '@seqline/testing';
import { migrateSchema } from '@seqline/store/scylla';
import type { InboxEntrySource } from '../src/scylla/conversation-facts-reader.ts';
import { CqlConversationIndex } from '../src/scylla/conversation-index.ts';
import { CqlConversationIndexWriter } from '../src/scylla/conversation-writer.ts';
import { Cql, timestampParam } from '../src/scylla/cql.ts';
import { CqlTimelineStore } from '../src/scylla/timeline.ts';
import { newClient, requireOrSkip, servicesAvailable, TEST_KEYSPACE } from './scylla-harness.ts';

const probe = await servicesAvailable();
const SELF = 'owner';
const PAGE = 40;
const ENTRIES = 1_200;
const CONVERSATIONS = 30;
const peerOf = (i: number) => ({ type: i % 4 === 0 ? 'group' : 'user', id: `c${i}` }) as const;

/**
 * Entry `seq` of a mixed history over 30 conversations: one message in five the owner's, one
 * in fifty mentioning the owner; now and then a read, a recall or an edit of the owner's
 * message 60 entries back (a page or more), or a delete of two earlier seqs.
 */
function historyEntry(seq: number, earlier: readonly Entry[]): Entry {
  const n = (seq * 2654435761) >>> 0;
  const conv = peerOf(n % CONVERSATIONS);
  const back = earlier.at(-60);
  let entry: NewEntry;
  if (seq % 97 === 0) entry = historyReadConv(`read-${seq}`, SELF, conv, seq - 1);
  else if (seq % 89 === 0 && back?.kind === 'msg' && back.from === SELF) entry = historyRecallOf(back, SELF);
  else if (seq % 83 === 0 && back?.kind === 'msg' && back.from === SELF) entry = historyEditOf(back, SELF, 1_000 + seq, `e${seq}`);
  else if (seq % 79 === 0) entry = historyDeleteOf(`del-${seq}`, SELF, [seq - 70, seq - 71]);
  else entry = historyMsg(`m-${seq}`, conv, n % 5 === 0 ? SELF : conv.id, n % 50 === 1 ? [SELF] : undefined);
  return { ...entry, seq };
}

/** The inbox as the index reads it, each read's size noted. */
class MeteredSource implements InboxEntrySource {
  largestRead = 0;
  entriesRead = 0;

  constructor(private readonly inner: CqlTimelineStore) {}

  reset(): void {
    this.largestRead = 0;
    this.entriesRead = 0;
  }

  findSeqs(input: Parameters<InboxEntrySource['findSeqs']>[0]): ReturnType<InboxEntrySource['findSeqs']> {
    return this.inner.findSeqs(input);
  }

  async entriesAt(inbox: InboxKey, seqs: readonly number[]): Promise<Map<number, Entry>> {
    return this.noted(await this.inner.entriesAt(inbox, seqs), (found) => found.size);
  }

  async readAfter({ inbox, afterSeq, limit }: InboxPageAfter): Promise<Entry[]> {
    return this.noted(await this.inner.readAfter({ inbox, afterSeq, limit }), (page) => page.length);
  }

  private noted<T>(value: T, size: (value: T) => number): T {
    this.largestRead = Math.max(this.largestRead, size(value));
    this.entriesRead += size(value);
    return value;
  }
}

/** The driver client, noting the largest page any SELECT of an index table (conv_*) returned. */
function meteredClient(client: Client, meter: { largestIndexPage: number; indexPages: number }): Client {
  const execute = client.execute.bind(client) as (query: string, ...rest: unknown[]) => Promise<types.ResultSet>;
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'execute') {
        return async (query: string, ...rest: unknown[]) => {
          const result = await execute(query, ...rest);
          if (/^\s*SELECT\b[\s\S]*\bFROM \S+\.conv_/i.test(query)) {
            meter.indexPages++;
            meter.largestIndexPage = Math.max(meter.largestIndexPage, result.rows.length);
          }
          return result;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

if (requireOrSkip(probe, 'bounded conversation index jobs on CQL')) {
  describe(`conversation index on CQL: catch-up and rebuild read pages of at most ${PAGE}`, () => {
    const raw = newClient();
    const meter = { largestIndexPage: 0, indexPages: 0 };
    const cql = new Cql(meteredClient(raw, meter), TEST_KEYSPACE);
    /** Appends without indexing, as a writer that crashed before every index write. */
    const plain = new CqlTimelineStore(cql, silentLogger, { indexConversations: false });
    const source = new MeteredSource(plain);
    const writer = new CqlConversationIndexWriter(cql, source, silentLogger, { pageSize: PAGE });
    const stores = { timeline: plain, conversations: new CqlConversationIndex(cql, plain) };
    const inbox = inboxKey(uniqueTenant(), SELF);
    const resetMeters = () => {
      source.reset();
      meter.largestIndexPage = 0;
      meter.indexPages = 0;
    };

    beforeAll(async () => {
      await migrateSchema(raw, { keyspace: TEST_KEYSPACE });
      const stored: Entry[] = [];
      for (let seq = 1; seq <= ENTRIES; seq++) stored.push(historyEntry(seq, stored));
      for (let i = 0; i < stored.length; i += 200) await plain.append({ inbox, entries: stored.slice(i, i + 200) });
    }, 120_000);
    afterAll(() => raw.shutdown());

    it('the catch-up of an inbox nobody indexed reads it a page at a time and leaves the recount', async () => {
      resetMeters();
      expect(await writer.catchUp(inbox)).toBe(ENTRIES);
      expect(source.largestRead).toBeLessThanOrEqual(PAGE);
      expect(source.entriesRead).toBeGreaterThanOrEqual(ENTRIES);
      await expectIndexMatchesInbox(stores, inbox, SELF, 100);
    }, 180_000);

    it('a rebuild reads the inbox twice and the stored index once, a page at a time, and leaves the recount', async () => {
      // Tampered with after the index's last write: one record, one visible row gone, an unread row of no conversation.
      const at = timestampParam(seqWriteTimestamp(ENTRIES) + 1n);
      const t = (table: string) => `${TEST_KEYSPACE}.${table}`;
      const visible = (
        await raw.execute(`SELECT conv_key, seq FROM ${t('conv_visible')} WHERE inbox = ? LIMIT 1`, [inbox], { prepare: true })
      ).first() as types.Row | null;
      if (visible === null) throw new Error('no visible row to tamper with');
      const tampered = String(visible.get('conv_key'));
      await raw.execute(
        `DELETE FROM ${t('conv_visible')} USING TIMESTAMP ? WHERE inbox = ? AND conv_key = ? AND seq = ?`,
        [at, inbox, tampered, visible.get('seq')],
        {
          prepare: true,
        },
      );
      await raw.execute(
        `UPDATE ${t('conv_records')} USING TIMESTAMP ? SET unread = 999 WHERE inbox = ? AND conv_key = ?`,
        [at, inbox, conversationKey(peerOf(1))],
        {
          prepare: true,
        },
      );
      await raw.execute(
        `INSERT INTO ${t('conv_unread')} (inbox, conv_key, seq, mention) VALUES (?, 'user:zed', 7, false) USING TIMESTAMP ?`,
        [inbox, at],
        {
          prepare: true,
        },
      );

      resetMeters();
      const report = await writer.rebuild({ inbox });
      expect(report).toEqual({
        differed: true,
        changedConversations: [...new Set([conversationKey(peerOf(1)), tampered, 'user:zed'])].sort(),
        conversations: CONVERSATIONS,
        entries: ENTRIES,
        headSeq: ENTRIES,
      });
      expect(source.largestRead, 'entries in one read of the inbox').toBeLessThanOrEqual(PAGE);
      expect(source.entriesRead, 'both passes read every entry').toBeGreaterThanOrEqual(2 * ENTRIES);
      expect(meter.largestIndexPage, 'rows in one page of the stored index').toBeLessThanOrEqual(PAGE);
      // The visible rows alone (about one per message) take many pages: the index was not read whole.
      expect(meter.indexPages).toBeGreaterThan(ENTRIES / PAGE);
      await expectIndexMatchesInbox(stores, inbox, SELF, 100);
      expect(await writer.rebuild({ inbox })).toMatchObject({
        differed: false,
        changedConversations: [],
        entries: ENTRIES,
        headSeq: ENTRIES,
      });
    }, 180_000);
  });
}
