/**
 * Push `convs` on the distributed write path, counted at the driver: an InboxOwner writing
 * through its FencedTimelineStore into the CQL timeline with its conversation index (as a
 * worker's shard owner does; ceilings on LMDB, which only allocates seqs), the cassandra-driver
 * client's `execute` and `batch` wrapped to count every statement. A 1:1 message's pushes must
 * carry the touched conversations at or past the pushed entry, taken from what the index writer
 * computed in the same append: nothing is read for them, neither the index nor the entry. Only
 * what the writer did not hold is read (the `last` a conversation read leaves unchanged).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, timelineOf, type ConversationIndex, type InboxKey, type NewEntry, type PushMessage } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import type { ScyllaStores } from '@seqline/store/scylla';
import { historyEditOf, historyReadConv, requireServices } from '@seqline/testing';
import { FencedTimelineWriter } from '../src/index.ts';
import { openCqlStores, SHARED_KEYSPACE } from './support/cql.ts';
import { MemoryLogger, RecordingPushBus, waitFor } from './support/doubles.ts';
import { uniqueId } from './support/services.ts';

/** Every statement the client runs, by kind and table (`SELECT conv_records`, `BATCH`…). */
class StatementCounter {
  readonly seen: string[] = [];
  constructor(client: ScyllaStores['client']) {
    const execute = client.execute.bind(client) as (...args: unknown[]) => unknown;
    const batch = client.batch.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { execute: (...args: unknown[]) => unknown }).execute = (...args) => {
      this.seen.push(describeStatement(String(args[0])));
      return execute(...args);
    };
    (client as unknown as { batch: (...args: unknown[]) => unknown }).batch = (...args) => {
      const statements = args[0] as Array<{ query: string }>;
      this.seen.push(`BATCH ${[...new Set(statements.map((s) => describeStatement(s.query)))].join(', ')}`);
      return batch(...args);
    };
  }

  /** Statements run while `work` runs. */
  async during(work: () => Promise<unknown>): Promise<string[]> {
    const from = this.seen.length;
    await work();
    return this.seen.slice(from);
  }
}

function describeStatement(query: string): string {
  const verb = query.trim().split(/\s+/)[0]?.toUpperCase() ?? '?';
  const table = /(?:FROM|INTO|UPDATE)\s+[A-Za-z0-9_]+\.([A-Za-z0-9_]+)/i.exec(query)?.[1] ?? '?';
  return `${verb} ${table}`;
}

const isRead = (s: string): boolean => s.startsWith('SELECT ');

// Every inbox here has a tenant of its own.
const cql = await openCqlStores(SHARED_KEYSPACE);

if (requireServices(cql, 'push convs on CQL, counted at the driver', 'a CQL cluster') && cql.ok) {
  const stores = cql.stores;
  const counter = new StatementCounter(stores.client);
  const root = mkdtempSync(join(tmpdir(), 'seqline-push-convs-cql-'));
  let engine: EmbeddedEngine;
  let owner: InboxOwner;
  const push = new RecordingPushBus();
  /** Reads the owner made of the index itself (the push's reads; the writer's go past it). */
  const indexCalls: string[] = [];
  const index = stores.conversations;
  const counted: ConversationIndex = {
    listConversations: (input) => index.listConversations(input),
    conversationEntries: (input) => index.conversationEntries(input),
    hiddenSeqs: (input) => index.hiddenSeqs(input),
    getConversation: ({ inbox: i, conv: c }) => (
      indexCalls.push(`getConversation ${c.type}:${c.id}`),
      index.getConversation({ inbox: i, conv: c })
    ),
    headSeq: (i) => (indexCalls.push('headSeq'), index.headSeq(i)),
  };

  beforeAll(async () => {
    engine = await openEmbeddedEngine({ dir: root });
    owner = new InboxOwner({
      // Fenced like a shard owner's (the lease check always passes here).
      timeline: timelineOf({ reader: stores.timeline, writer: new FencedTimelineWriter(stores.timeline, 0, () => undefined, 1) }),
      ceilings: engine.ceilings,
      push,
      logger: new MemoryLogger(),
      epoch: await engine.ceilings.nextEpoch('push-convs-cql'),
      conversations: counted,
    });
  });
  afterAll(async () => {
    await owner.close();
    await engine.close();
    await stores.close();
    rmSync(root, { recursive: true, force: true });
  });

  const tenant = uniqueId('t');
  let n = 0;
  /** A 1:1 message as `send` writes it: the sender's copy, then the recipient's chained on it. */
  async function oneToOne(from: string, to: string): Promise<{ own: PushMessage; delivered: PushMessage }> {
    const appinfo = `m${++n}-${tenant}`;
    const base = { kind: 'msg', appinfo, from, sendTime: Date.now(), type: 'text', body: { text: `hi ${n}` } } as const;
    const own: NewEntry = { ...base, conv: { type: 'user', id: to } };
    const copy: NewEntry = { ...base, conv: { type: 'user', id: from } };
    const [fromInbox, toInbox] = [inboxKey(tenant, from), inboxKey(tenant, to)];
    const chained = await owner.appendThen({
      inbox: fromInbox,
      entries: [own],
      next: { inbox: toInbox, entries: [copy], timeoutMs: 10_000 },
    });
    expect(chained.next).toBe('appended');
    const pushOf = (inbox: InboxKey) => push.published.find((p) => p.inbox === inbox && p.entries.some((e) => e.appinfo === appinfo));
    return {
      own: await waitFor('the sender push', () => pushOf(fromInbox)),
      delivered: await waitFor('the recipient push', () => pushOf(toInbox)),
    };
  }

  describe('push convs on CQL, counted at the driver', () => {
    it('a 1:1 message: both pushes carry the conversation at the entry, and nothing is read for them', async () => {
      await oneToOne('alice', 'bob'); // the index writer learns both inboxes (a reader of its own)
      indexCalls.length = 0;
      const rounds = 10;
      const statements = await counter.during(async () => {
        for (let i = 0; i < rounds; i++) {
          const { own, delivered } = await oneToOne('alice', 'bob');
          const entry = delivered.entries[0]!;
          expect(delivered.convs).toEqual([
            expect.objectContaining({ conv: { type: 'user', id: 'alice' }, unread: i + 2, lastSeq: entry.seq, asOfSeq: entry.seq }),
          ]);
          expect(delivered.convs?.[0]?.last).toEqual(entry);
          expect(own.convs).toEqual([
            expect.objectContaining({ conv: { type: 'user', id: 'bob' }, unread: 0, readSeq: own.entries[0]!.seq }),
          ]);
        }
      });
      const reads = statements.filter(isRead);
      const tally = new Map<string, number>();
      for (const s of statements) tally.set(s, (tally.get(s) ?? 0) + 1);
      process.stdout.write(
        `[push-convs.cql] per 1:1 message (${rounds} messages): ${statements.length / rounds} statements, ${reads.length / rounds} reads; ${JSON.stringify(Object.fromEntries(tally))}\n`,
      );
      expect(reads).toEqual([]);
      expect(indexCalls).toEqual([]);
    });

    it('a read on another device: the push carries the state; only `last`, which the writer never looked at, is read', async () => {
      const { delivered } = await oneToOne('carol', 'dave');
      const entry = delivered.entries[0]!;
      const daveInbox = inboxKey(tenant, 'dave');
      indexCalls.length = 0;
      const read = historyReadConv(`read-${tenant}-1`, 'dave', { type: 'user', id: 'carol' }, entry.seq);
      const [outcome] = await owner.append({ inbox: daveInbox, entries: [read] });
      const p = await waitFor('the read push', () =>
        push.published.find((x) => x.inbox === daveInbox && x.entries[0]?.seq === outcome!.seq),
      );
      expect(p.convs).toEqual([
        expect.objectContaining({ conv: { type: 'user', id: 'carol' }, unread: 0, readSeq: entry.seq, asOfSeq: outcome!.seq, last: entry }),
      ]);
      expect(indexCalls).toEqual(['getConversation user:carol']);
    });

    it('an edit of the last message: the push shows the edit, from the facts the writer read for it, with no read of its own', async () => {
      const { delivered } = await oneToOne('erin', 'fred');
      const message = delivered.entries[0]!;
      const fredInbox = inboxKey(tenant, 'fred');
      indexCalls.length = 0;
      const edit = historyEditOf(message, 'erin', Date.now(), 'edited');
      const [outcome] = await owner.append({ inbox: fredInbox, entries: [edit] });
      const p = await waitFor('the edit push', () =>
        push.published.find((x) => x.inbox === fredInbox && x.entries[0]?.seq === outcome!.seq),
      );
      expect(p.convs).toEqual([expect.objectContaining({ conv: { type: 'user', id: 'erin' }, unread: 1, asOfSeq: outcome!.seq })]);
      expect(p.convs?.[0]?.last).toMatchObject({ seq: message.seq, body: { text: 'edited' }, edit: { body: { text: 'edited' } } });
      expect(p.convs?.[0]).toEqual(await stores.conversations.getConversation({ inbox: fredInbox, conv: { type: 'user', id: 'erin' } }));
      expect(indexCalls).toEqual([]);
    });
  });
}
