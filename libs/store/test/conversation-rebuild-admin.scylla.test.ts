/**
 * The admin rebuild of one inbox's conversation index on CQL (rebuildConversations, run by the
 * owner): a correct index is left as it is, rows tampered with by hand are rebuilt and named, a
 * deposed owner rebuilds nothing, and a rebuild racing appends is serialised with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedError, inboxKey, seqWriteTimestamp, type Entry, type InboxKey, type WriteGuard } from '@seqline/core';
import {
  expectIndexMatchesInbox,
  historyClearOf,
  historyDeleteOf,
  historyEditOf,
  historyMsg,
  historyReadConv,
  uniqueTenant,
  type ConversationStores,
} from '@seqline/testing';
import { migrateSchema, type ScyllaStores } from '@seqline/store/scylla';
import { timestampParam } from '../src/scylla/cql.ts';
import { newClient, openTestStores, requireOrSkip, servicesAvailable, TEST_KEYSPACE } from './scylla-harness.ts';

const probe = await servicesAvailable();
const SELF = 'me';

if (requireOrSkip(probe, 'conversation index rebuild on CQL')) {
  describe('conversation index on CQL: rebuildConversations (the admin rebuild, run by the owner)', () => {
    const keyspace = TEST_KEYSPACE;
    const raw = newClient();
    let owner: ScyllaStores;
    beforeAll(async () => {
      await migrateSchema(raw, { keyspace });
      owner = await openTestStores({ keyspace });
    }, 120_000);
    afterAll(async () => {
      await owner.close();
      await raw.shutdown();
    });
    const stores = (): ConversationStores => ({ timeline: owner.timeline, conversations: owner.conversations });
    const bob = { type: 'user', id: 'bob' } as const;
    const team = { type: 'group', id: 'team' } as const;

    /** A small inbox touching every table: unread with mentions, a read, an edit, a delete, a clear. */
    async function seeded(): Promise<InboxKey> {
      const inbox = inboxKey(uniqueTenant(), SELF);
      const m1: Entry = { ...historyMsg('m1', bob, 'bob', [SELF]), seq: 1 };
      const m2: Entry = { ...historyMsg('m2', team, 'carol'), seq: 2 };
      const m3: Entry = { ...historyMsg('m3', team, SELF), seq: 3 };
      const m4: Entry = { ...historyMsg('m4', bob, 'bob'), seq: 4 };
      await owner.timeline.append({ inbox, entries: [m1, m2, m3, m4] });
      await owner.timeline.append({
        inbox,
        entries: [
          { ...historyEditOf(m3, SELF, 1_000, 'edited'), seq: 5 },
          { ...historyMsg('m6', team, 'carol', [SELF]), seq: 6 },
          { ...historyDeleteOf('d7', SELF, [2]), seq: 7 },
          { ...historyReadConv('r8', SELF, bob, 1), seq: 8 },
          { ...historyClearOf('c9', SELF, team, 3), seq: 9 },
        ],
      });
      await expectIndexMatchesInbox(stores(), inbox, SELF, 2);
      return inbox;
    }

    it('a correct index: differed false, nothing changed, the index still equals the recount', async () => {
      const inbox = await seeded();
      expect(await owner.timeline.rebuildConversations({ inbox })).toEqual({
        differed: false,
        changedConversations: [],
        conversations: 2,
        entries: 9,
        headSeq: 9,
      });
      await expectIndexMatchesInbox(stores(), inbox, SELF, 2);
    });

    it('rows tampered with by hand: differed true, the tampered conversations named, the rebuilt index equals the recount', async () => {
      const inbox = await seeded();
      const t = (table: string) => `${keyspace}.${table}`;
      // Ordered after the index write exact at 9 (index rows take their timestamps from seqs).
      const at = timestampParam(seqWriteTimestamp(9) + 1n);
      await raw.execute(
        `UPDATE ${t('conv_records')} USING TIMESTAMP ? SET unread = 7 WHERE inbox = ? AND conv_key = 'user:bob'`,
        [at, inbox],
        {
          prepare: true,
        },
      );
      await raw.execute(
        `DELETE FROM ${t('conv_visible')} USING TIMESTAMP ? WHERE inbox = ? AND conv_key = 'group:team' AND seq = 6`,
        [at, inbox],
        {
          prepare: true,
        },
      );
      await raw.execute(
        `INSERT INTO ${t('conv_unread')} (inbox, conv_key, seq, mention) VALUES (?, 'user:zed', 99, true) USING TIMESTAMP ?`,
        [inbox, at],
        { prepare: true },
      );
      await raw.execute(`UPDATE ${t('conv_watermark')} USING TIMESTAMP ? SET seq = 4 WHERE inbox = ?`, [at, inbox], { prepare: true });
      expect(await owner.conversations.headSeq(inbox)).toBe(4);
      const report = await owner.timeline.rebuildConversations({ inbox });
      expect(report).toEqual({
        differed: true,
        changedConversations: ['group:team', 'user:bob', 'user:zed'],
        conversations: 2,
        entries: 9,
        headSeq: 9,
      });
      await expectIndexMatchesInbox(stores(), inbox, SELF, 2);
      // The writer forgot what it held of the inbox: the next append builds on the rebuilt rows.
      await owner.timeline.append({ inbox, entries: [{ ...historyMsg('m10', bob, 'bob', [SELF]), seq: 10 }] });
      await expectIndexMatchesInbox(stores(), inbox, SELF, 2);
      expect(await owner.timeline.rebuildConversations({ inbox })).toMatchObject({ differed: false, headSeq: 10 });
    });

    it('a deposed owner rebuilds nothing (FENCED, the index untouched); a rebuild racing appends is serialised with them', async () => {
      const inbox = await seeded();
      const fenced: WriteGuard = Object.assign(
        () => {
          throw new FencedError('lease lost');
        },
        { term: 'shard-1@9' },
      );
      await expect(owner.timeline.rebuildConversations({ inbox, guard: fenced })).rejects.toBeInstanceOf(FencedError);
      await expectIndexMatchesInbox(stores(), inbox, SELF, 2);
      const appends = Array.from({ length: 5 }, (_, i) =>
        owner.timeline.append({ inbox, entries: [{ ...historyMsg(`x${i}`, bob, 'bob'), seq: 10 + i }] }),
      );
      // Entries durable but not yet indexed when the rebuild ran count as differed (the index trailed): not asserted.
      const [report] = await Promise.all([owner.timeline.rebuildConversations({ inbox }), ...appends]);
      expect(report.headSeq).toBeGreaterThanOrEqual(9);
      await expectIndexMatchesInbox(stores(), inbox, SELF, 2);
    });
  });
}
