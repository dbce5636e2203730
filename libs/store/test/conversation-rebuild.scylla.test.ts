/**
 * The admin rebuild on CQL under write faults (the ConversationRebuilder fault contract): the
 * driver client is wrapped so that the k-th write of a rebuild fails, for every k, and the next
 * append must leave the index equal to core's recount — a rebuild never leaves a half state
 * that the append's catch-up would count twice.
 */
import type { Client } from 'cassandra-driver';
import { seqWriteTimestamp, silentLogger } from '@seqline/core';
import { conversationRebuildFaultContract, WriteFaults } from '@seqline/testing';
import { migrateSchema } from '@seqline/store/scylla';
import { CqlConversationIndex } from '../src/scylla/conversation-index.ts';
import { Cql, timestampParam } from '../src/scylla/cql.ts';
import { CqlTimelineStore } from '../src/scylla/timeline.ts';
import { newClient, openTestStores, requireOrSkip, servicesAvailable, TEST_KEYSPACE } from './scylla-harness.ts';

const probe = await servicesAvailable();
const INDEX_TABLES = ['conv_records', 'conv_list', 'conv_unread', 'conv_visible', 'conv_deleted', 'conv_edits', 'conv_watermark'];

/** The client with every write (any statement but a SELECT, and every batch) going through `faults`. */
function faultyClient(client: Client, faults: WriteFaults): Client {
  const execute = client.execute.bind(client) as (query: string, ...rest: unknown[]) => Promise<unknown>;
  const batch = client.batch.bind(client) as (...args: unknown[]) => Promise<unknown>;
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'execute') {
        return (query: string, ...rest: unknown[]) =>
          /^\s*SELECT\b/i.test(query) ? execute(query, ...rest) : faults.write(() => execute(query, ...rest));
      }
      if (prop === 'batch') return (...args: unknown[]) => faults.write(() => batch(...args));
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

if (requireOrSkip(probe, 'conversation rebuild under write faults on CQL')) {
  // 600 messages: over 500 index rows (most of them visible items), so the recount takes two write chunks between the
  // sentinel with the deletes and the watermark: four steps.
  conversationRebuildFaultContract(
    'CQL',
    async () => {
      const raw = newClient();
      await migrateSchema(raw, { keyspace: TEST_KEYSPACE });
      const stores = await openTestStores();
      const faults = new WriteFaults();
      const cql = new Cql(faultyClient(stores.client, faults), TEST_KEYSPACE);
      const timeline = new CqlTimelineStore(cql, silentLogger);
      const conversations = new CqlConversationIndex(cql, timeline);
      return {
        stores: () => ({ timeline, conversations }),
        rebuild: (inbox) => timeline.rebuildConversations({ inbox }),
        dropIndex: async (inbox) => {
          // As an operator must clear an inbox's index by hand now that index rows take their
          // timestamps from seqs (schema/README.md): every row deleted above the index's last
          // write (the one exact at the head), the rebuild sentinel set in the same batch — or
          // the writer's catch-up from watermark 0 would write below those tombstones.
          const at = timestampParam(seqWriteTimestamp(await timeline.headSeq(inbox)) + 1n);
          await raw.batch(
            [
              ...INDEX_TABLES.filter((table) => table !== 'conv_watermark').map((table) => ({
                query: `DELETE FROM ${TEST_KEYSPACE}.${table} USING TIMESTAMP ? WHERE inbox = ?`,
                params: [at, inbox],
              })),
              {
                query: `UPDATE ${TEST_KEYSPACE}.conv_watermark USING TIMESTAMP ? SET seq = null, rebuilding = true WHERE inbox = ?`,
                params: [at, inbox],
              },
            ],
            { prepare: true, logged: false },
          );
        },
        faults,
        close: async () => {
          await stores.close();
          await raw.shutdown();
        },
      };
    },
    { messages: 600, minWriteSteps: 4 },
  );
}
