/**
 * The CQL conversation index under wall clocks that disagree (the fault campaign's clock-jump
 * finding): Cassandra keeps the write with the higher timestamp, so index writes must be ordered
 * by the seqs they describe, not by their writer's clock. Two processes are two store sets, each
 * with its own clock (the seq log still takes its timestamps from it); the index must equal the
 * recount of the inbox whatever the clocks say — when writers take turns, when a paused writer's
 * write lands after its successor's writes and a rebuild, and when rebuilds repeat at one head
 * or run over an inbox whose entries are gone.
 */
import type { Client } from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, silentLogger, type Entry, type InboxKey, type NewEntry, type WriteGuard } from '@seqline/core';
import {
  historyMsg,
  historyReadConv,
  JumpingClock,
  uniqueTenant,
  WriteFaults,
  type ConversationStores,
  expectIndexMatchesInbox,
} from '@seqline/testing';
import { migrateSchema } from '@seqline/store/scylla';
import { CqlConversationIndex } from '../src/scylla/conversation-index.ts';
import { Cql, DEFAULT_CONSISTENCY } from '../src/scylla/cql.ts';
import { CqlTimelineStore } from '../src/scylla/timeline.ts';
import { newClient, openTestStores, requireOrSkip, scratchKeyspace, servicesAvailable } from './scylla-harness.ts';

const probe = await servicesAvailable();
const SELF = 'me';
const MINUTES_10 = 10 * 60_000;
const bob = { type: 'user', id: 'bob' } as const;
const team = { type: 'group', id: 'team' } as const;
const at = (entry: NewEntry, seq: number): Entry => ({ ...entry, seq });
const term = (name: string): WriteGuard => Object.assign(() => undefined, { term: name });

/**
 * The client with every index write (a statement on a conv_* table that is not a SELECT, or a
 * batch of them) passed through `through`; everything else goes straight to the cluster.
 */
function interceptIndexWrites(client: Client, through: (run: () => Promise<unknown>) => Promise<unknown>): Client {
  const isIndexWrite = (query: string) => !/^\s*SELECT\b/i.test(query) && query.includes('.conv_');
  const execute = client.execute.bind(client) as (query: string, ...rest: unknown[]) => Promise<unknown>;
  const batch = client.batch.bind(client) as (queries: Array<{ query: string }>, ...rest: unknown[]) => Promise<unknown>;
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'execute') {
        return (query: string, ...rest: unknown[]) =>
          isIndexWrite(query) ? through(() => execute(query, ...rest)) : execute(query, ...rest);
      }
      if (prop === 'batch') {
        return (queries: Array<{ query: string }>, ...rest: unknown[]) =>
          queries.some((q) => isIndexWrite(q.query)) ? through(() => batch(queries, ...rest)) : batch(queries, ...rest);
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Holds the next index write until released: a writer paused after its guard, its request not yet sent. */
class HeldWrite {
  private armed = false;
  private run: (() => Promise<unknown>) | undefined;
  private caught: (() => void) | undefined;
  readonly captured = new Promise<void>((resolve) => (this.caught = resolve));

  arm(): void {
    this.armed = true;
  }

  through = async (run: () => Promise<unknown>): Promise<unknown> => {
    if (!this.armed) return run();
    this.armed = false;
    let done!: (value: unknown) => void;
    let failed!: (err: unknown) => void;
    const answer = new Promise<unknown>((resolve, reject) => ([done, failed] = [resolve, reject]));
    this.run = () => run().then(done, failed);
    this.caught?.();
    return answer;
  };

  /** Sends the held write now; resolves once the cluster answered it. */
  async release(): Promise<void> {
    if (this.run === undefined) throw new Error('no write held');
    await this.run();
  }
}

if (requireOrSkip(probe, 'conversation index on CQL under wall clocks that jump')) {
  const keyspace = scratchKeyspace('conv_clocks');
  const raw = newClient();
  beforeAll(() => migrateSchema(raw, { keyspace }), 120_000);
  afterAll(async () => {
    await raw.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    await raw.shutdown();
  }, 60_000);

  /** A writer process: its own driver client, memory and clock; `through` sees its index writes. */
  function writer(
    client: Client,
    clock: JumpingClock,
    through?: (run: () => Promise<unknown>) => Promise<unknown>,
  ): ConversationStores & { timeline: CqlTimelineStore } {
    const cql = new Cql(through === undefined ? client : interceptIndexWrites(client, through), keyspace, DEFAULT_CONSISTENCY, clock);
    const timeline = new CqlTimelineStore(cql, silentLogger);
    return { timeline, conversations: new CqlConversationIndex(cql, timeline) };
  }

  /** The inbox's entries at or below `seq` as if they had expired (their TTL ran out). */
  async function expireUpTo(inbox: InboxKey, seq: number): Promise<void> {
    await raw.execute(`DELETE FROM ${keyspace}.timeline WHERE inbox = ? AND bucket = 0 AND seq <= ?`, [inbox, seq], { prepare: true });
  }

  describe('conversation index on CQL: write order follows seqs, not clocks', () => {
    let client: Client;
    beforeAll(async () => {
      client = newClient();
      await client.connect();
    });
    afterAll(() => client.shutdown());

    it('two processes take an inbox in turns, one clock 10 min ahead, the other jumping 10 min back: unread and last equal the recount', async () => {
      const [clockA, clockB] = [new JumpingClock(), new JumpingClock(MINUTES_10)];
      const [a, b] = [writer(client, clockA), writer(client, clockB)];
      const inbox = inboxKey(uniqueTenant(), SELF);
      await a.timeline.append({
        inbox,
        entries: [at(historyMsg('m1', bob, 'bob'), 1), at(historyMsg('m2', team, 'carol'), 2)],
        guard: term('a@1'),
      });
      clockA.offsetMs -= MINUTES_10;
      await a.timeline.append({ inbox, entries: [at(historyMsg('m3', bob, 'bob'), 3)], guard: term('a@1') });
      await b.timeline.append({ inbox, entries: [at(historyMsg('m4', bob, 'bob'), 10_001)], guard: term('b@2') });
      await b.timeline.append({ inbox, entries: [at(historyReadConv('r5', SELF, team, 2), 10_002)], guard: term('b@2') });
      await expectIndexMatchesInbox(b, inbox, SELF, 2);
      // A takes the inbox back, 20 minutes behind B: each of its writes must still win over B's.
      await a.timeline.append({ inbox, entries: [at(historyReadConv('r6', SELF, bob, 10_001), 20_001)], guard: term('a@3') });
      await a.timeline.append({ inbox, entries: [at(historyMsg('m7', bob, 'bob'), 20_002)], guard: term('a@3') });
      expect(await b.conversations.getConversation({ inbox, conv: bob })).toMatchObject({
        unread: 1,
        readSeq: 10_001,
        lastMsgSeq: 20_002,
        last: { appinfo: 'm7' },
      });
      expect(await b.conversations.getConversation({ inbox, conv: team })).toMatchObject({ unread: 0, readSeq: 2, lastMsgSeq: 2 });
      await expectIndexMatchesInbox(a, inbox, SELF, 2);
    });

    it('an index write held past a takeover (its writer paused, its clock jumped 10 min ahead) lands after the successor and its rebuild: it changes nothing', async () => {
      const held = new HeldWrite();
      const pausedClock = new JumpingClock();
      const paused = writer(client, pausedClock, held.through);
      const successor = writer(client, new JumpingClock());
      const inbox = inboxKey(uniqueTenant(), SELF);
      await paused.timeline.append({
        inbox,
        entries: [1, 2, 3].map((seq) => at(historyMsg(`m${seq}`, bob, 'bob'), seq)),
        guard: term('p@1'),
      });
      pausedClock.offsetMs += MINUTES_10;
      held.arm();
      const late = paused.timeline.append({
        inbox,
        entries: [at(historyMsg('m4', bob, 'bob'), 4), at(historyReadConv('r5', SELF, bob, 4), 5)],
        guard: term('p@1'),
      });
      await held.captured; // its entries are durable, its index write is on hold
      await successor.timeline.append({ inbox, entries: [at(historyMsg('m6', bob, 'bob'), 10_001)], guard: term('s@2') });
      expect(await successor.timeline.rebuildConversations({ inbox, guard: term('s@2') })).toMatchObject({
        differed: false,
        headSeq: 10_001,
      });
      await successor.timeline.append({ inbox, entries: [at(historyMsg('m7', bob, 'bob'), 10_002)], guard: term('s@2') });
      await held.release();
      await late;
      expect(await successor.conversations.getConversation({ inbox, conv: bob })).toMatchObject({
        unread: 2,
        readSeq: 4,
        lastMsgSeq: 10_002,
        asOfSeq: 10_002,
      });
      await expectIndexMatchesInbox(successor, inbox, SELF, 2);
      // Later writes still show: the rebuild hid nothing newer.
      await successor.timeline.append({ inbox, entries: [at(historyReadConv('r8', SELF, bob, 10_001), 10_003)], guard: term('s@2') });
      expect(await successor.conversations.getConversation({ inbox, conv: bob })).toMatchObject({ unread: 1, readSeq: 10_001 });
      await expectIndexMatchesInbox(successor, inbox, SELF, 2);
    });

    it('a rebuild cut off after its rows is redone at the same head, then rebuilt twice over expired entries: each clears all before it, the next append shows', async () => {
      const faults = new WriteFaults();
      const owner = writer(client, new JumpingClock(), (run) => faults.write(run));
      const inbox = inboxKey(uniqueTenant(), SELF);
      await owner.timeline.append({
        inbox,
        entries: [
          at(historyMsg('m1', bob, 'bob', [SELF]), 1),
          at(historyMsg('m2', team, 'carol', [SELF]), 2),
          at(historyMsg('m3', bob, 'bob'), 3),
          at(historyMsg('m4', team, 'carol'), 4),
        ],
      });
      // Clear (1), rows (2), watermark (3): cut off before the watermark, the rows written.
      faults.arm({ failAt: 3, applied: false });
      await expect(owner.timeline.rebuildConversations({ inbox })).rejects.toThrow(/injected/);
      expect(faults.disarm()).toBe(3);
      expect(await owner.conversations.headSeq(inbox)).toBe(0); // the sentinel
      // The two oldest entries expire before the redo: its recount differs from the rows left behind.
      await expireUpTo(inbox, 2);
      expect(await owner.timeline.rebuildConversations({ inbox })).toMatchObject({ differed: true, entries: 2, headSeq: 4 });
      await expectIndexMatchesInbox(owner, inbox, SELF, 2);
      expect(await owner.conversations.getConversation({ inbox, conv: bob })).toMatchObject({ unread: 1, mentions: 0 });
      // Every entry expires: the head is 0, below the stored watermark; rebuilt twice.
      await expireUpTo(inbox, 4);
      expect(await owner.timeline.rebuildConversations({ inbox })).toMatchObject({
        differed: true,
        entries: 0,
        headSeq: 0,
        conversations: 0,
      });
      expect(await owner.timeline.rebuildConversations({ inbox })).toMatchObject({ differed: false, entries: 0, headSeq: 0 });
      expect(await owner.conversations.listConversations({ inbox, limit: 10 })).toEqual({ convs: [], hasMore: false });
      await owner.timeline.append({ inbox, entries: [at(historyMsg('m5', bob, 'bob'), 10_001)], guard: term('o@2') });
      expect(await owner.conversations.getConversation({ inbox, conv: bob })).toMatchObject({
        unread: 1,
        lastMsgSeq: 10_001,
        asOfSeq: 10_001,
      });
      await expectIndexMatchesInbox(owner, inbox, SELF, 2);
    });
  });

  describe('the stores take the clock they are opened with', () => {
    it('openScyllaStores({ clock }): the seq log writes at that clock', async () => {
      const clock = new JumpingClock(-MINUTES_10);
      const opened = await openTestStores({ keyspace, clock });
      try {
        const inbox = inboxKey(uniqueTenant(), SELF);
        await opened.timeline.append({ inbox, entries: [at(historyMsg('m1', bob, 'bob'), 1)] });
        const row = (
          await raw.execute(
            `SELECT WRITETIME(doc) AS written FROM ${keyspace}.timeline WHERE inbox = ? AND bucket = 0 AND seq = 1`,
            [inbox],
            {
              prepare: true,
            },
          )
        ).first();
        const writtenMs = Number(String(row?.get('written'))) / 1000;
        expect(writtenMs).toBeLessThanOrEqual(clock.now());
        expect(writtenMs).toBeLessThan(Date.now() - MINUTES_10 / 2);
      } finally {
        await opened.close();
      }
    });
  });
}
