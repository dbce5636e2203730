/**
 * The big inbox of the distributed conversations bench: bench/conversations-inbox.ts's shape
 * (10 000 conversations, one in five messages sent by the owner, mentions) on the CQL store.
 * Built once per keyspace and reused while complete. Entries go through the CQL timeline store
 * with the index off, in appends of BUILD_BATCH; the index rows are the writer's own statements
 * (core's indexEntrySync with facts kept in memory, the writer's mergeChanges over runs of
 * MERGED entries, changeStatements), sent as single-partition batches with rising timestamps —
 * the same rows and the same list-row tombstones the writer leaves, without a read per entry.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from 'cassandra-driver';
import {
  conversationKey,
  indexEntrySync,
  inboxKey,
  seqWriteTimestamp,
  type ConversationChanges,
  type ConvRecord,
  type Entry,
  type InboxKey,
  type UnreadItem,
} from '@seqline/core';
import type { ScyllaStores } from '@seqline/store/scylla';
import { Cql, timestampParam, type Statement } from '../libs/store/src/scylla/cql.ts';
import { mergeChanges } from '../libs/store/src/scylla/conversation-memory.ts';
import { changeStatements, conversationStatements } from '../libs/store/src/scylla/conversation-tables.ts';
import { BIG_CONVERSATIONS, BIG_SELF, bigInboxEntry } from './conversations-inbox.ts';

const BUILD_BATCH = 5_000;
/** Entries per index write while building: as the writer merges an append of that many messages. */
const MERGED = 16;
const WRITES_IN_FLIGHT = 32;

export interface CqlBigInbox {
  inbox: InboxKey;
  entries: number;
  /** The records as built, newest activity first (to check what the store answers). */
  newest: ConvRecord[];
  origin: string;
}

/** Opens the big inbox of `entries` entries in the stores' keyspace, building it when it is not complete. */
export async function openCqlBigInbox(plain: ScyllaStores, indexed: ScyllaStores, keyspace: string, entries: number): Promise<CqlBigInbox> {
  const inbox = inboxKey('bench', `${BIG_SELF}-${entries}`);
  const [head, watermark] = await Promise.all([plain.timeline.headSeq(inbox), indexed.conversations.headSeq(inbox)]);
  if (head === entries && watermark === entries) {
    return { inbox, entries, newest: recountNewest(entries), origin: 'reused from an earlier run' };
  }
  // A partial earlier build cannot be appended to (its seqs are taken): build under a new name.
  const target = head === 0 ? inbox : inboxKey('bench', `${BIG_SELF}-${entries}-${Date.now().toString(36)}`);
  const t0 = performance.now();
  for (let from = 1; from <= entries; from += BUILD_BATCH) {
    const batch = Array.from({ length: Math.min(BUILD_BATCH, entries - from + 1) }, (_, i) => bigInboxEntry(from + i));
    await plain.timeline.append({ inbox: target, entries: batch });
  }
  const entriesSeconds = (performance.now() - t0) / 1000;
  const newest = await writeIndex(plain.client, keyspace, target, entries);
  const seconds = (performance.now() - t0) / 1000;
  return {
    inbox: target,
    entries,
    newest,
    origin: `built in ${seconds.toFixed(0)} s (entries ${entriesSeconds.toFixed(0)} s through the store, index ${(seconds - entriesSeconds).toFixed(0)} s as the writer's statements)`,
  };
}

/** The index as the writer would leave it, in memory: records and unread items per conversation. */
class IndexModel {
  readonly records = new Map<string, ConvRecord>();
  private readonly unread = new Map<string, UnreadItem[]>();

  index(entry: Entry): ConversationChanges {
    const changes = indexEntrySync(entry, BIG_SELF, (need, facts) => {
      for (const key of need.convKeys) facts.records.set(key, this.records.get(key) ?? null);
      for (const { convKey, upToSeq } of need.unreadUpTo) {
        facts.unreadUpTo.set(
          convKey,
          (this.unread.get(convKey) ?? []).filter((item) => item.seq <= upToSeq),
        );
      }
    });
    for (const { after } of changes.records) this.records.set(conversationKey(after.conv), after);
    for (const item of changes.unreadRemove) {
      this.unread.set(
        item.convKey,
        (this.unread.get(item.convKey) ?? []).filter((u) => u.seq !== item.seq),
      );
    }
    for (const item of changes.unreadAdd) this.unread.set(item.convKey, [...(this.unread.get(item.convKey) ?? []), item]);
    return changes;
  }

  newest(): ConvRecord[] {
    return [...this.records.values()].sort((a, b) => b.lastSeq - a.lastSeq);
  }
}

function recountNewest(entries: number): ConvRecord[] {
  const model = new IndexModel();
  for (let seq = 1; seq <= entries; seq++) model.index(bigInboxEntry(seq));
  return model.newest();
}

async function writeIndex(client: Client, keyspace: string, inbox: InboxKey, entries: number): Promise<ConvRecord[]> {
  const q = conversationStatements(new Cql(client, keyspace));
  const model = new IndexModel();
  let seq = 0;
  /** The next run's statements, at the timestamp of the seq they leave the index exact at (changeStatements). */
  const nextRun = (): { statements: Statement[] } | undefined => {
    if (seq >= entries) return undefined;
    const run: ConversationChanges[] = [];
    for (let i = 0; i < MERGED && seq < entries; i++) run.push(model.index(bigInboxEntry(++seq)));
    const statements = changeStatements(q, inbox, mergeChanges(run), seq);
    // The watermark (the last statement) is written once, when every run has landed.
    return { statements: statements.slice(0, -1) };
  };
  const lane = async (): Promise<void> => {
    for (let run = nextRun(); run !== undefined; run = nextRun()) {
      await client.batch(run.statements, { prepare: true, logged: false });
    }
  };
  await Promise.all(Array.from({ length: WRITES_IN_FLIGHT }, lane));
  await client.execute(q.setWatermark, [inbox, entries, timestampParam(seqWriteTimestamp(entries))], { prepare: true });
  if (model.records.size !== BIG_CONVERSATIONS) throw new Error(`built ${model.records.size} conversations, not ${BIG_CONVERSATIONS}`);
  return model.newest();
}
