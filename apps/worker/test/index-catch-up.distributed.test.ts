/**
 * A conversation index left behind its entries is caught up by the inbox's owner, not by the
 * inbox's next append: after a failed index write the owner catches up itself, and a new owner
 * catches up the inboxes its predecessor recorded as left behind when it starts serving. The
 * offline notification of such an inbox — whose badge must count its own entry and waits for the
 * index (BadgeIndexBehindError) — goes out with the right badge, and nothing is dead-lettered.
 *
 * A worker composed in this process as worker.ts composes it (shard owners, notifier, job
 * consumers) on the real Cassandra (a keyspace of this file's own), Redis and NATS (a namespace
 * of its own); the CQL driver client fails the index writes of one inbox while armed.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShardOwnerHost } from '@seqline/cluster';
import { inboxKey, silentLogger, type InboxKey } from '@seqline/core';
import { createMessaging, OFFLINE_NOTIFY_QUEUE, startWorkers, type Workers } from '@seqline/messaging';
import {
  distributedMessagingDeps,
  loadDistributedConfig,
  openDistributedInfra,
  type DistributedInfra,
  type DistributedMessaging,
} from '@seqline/runtime';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { cleanupNamespace, CQL_CONTACT, NATS_URL, probeAll, REDIS_URL, requireServices } from './support/services.ts';
import { shardOwnerHostOf } from '../src/worker.ts';

const SECRET = 'index-catch-up-hook-secret';
const WINDOW_MS = 200;
const SHARDS = 2;

/** Fails index writes (a statement on a conv_* table that is not a SELECT) of chosen inboxes, refused before they are sent. */
class IndexWriteFaults {
  /** Inbox → index writes of it still to fail. */
  private readonly failing = new Map<InboxKey, number>();
  failed = 0;

  constructor(client: Client) {
    const target = (s: { query: string; params?: unknown }): InboxKey | undefined => {
      if (/^\s*SELECT\b/i.test(s.query) || !s.query.includes('.conv_') || !Array.isArray(s.params)) return undefined;
      const inbox = s.params[0] as InboxKey;
      return this.failing.has(inbox) ? inbox : undefined;
    };
    const refused = (statements: Array<{ query: string; params?: unknown }>): boolean => {
      const hit = statements.map(target).filter((inbox) => inbox !== undefined);
      if (hit.length === 0) return false;
      for (const inbox of new Set(hit)) {
        const left = (this.failing.get(inbox) ?? 1) - 1;
        if (left <= 0) this.failing.delete(inbox);
        else this.failing.set(inbox, left);
      }
      this.failed++;
      return true;
    };
    const execute = client.execute.bind(client) as (query: string, params?: unknown, ...rest: unknown[]) => Promise<unknown>;
    const batch = client.batch.bind(client) as (
      queries: Array<{ query: string; params?: unknown }>,
      ...rest: unknown[]
    ) => Promise<unknown>;
    const injected = () => Promise.reject(new Error('index write refused (injected)'));
    Object.assign(client, {
      execute: (query: string, params?: unknown, ...rest: unknown[]) =>
        refused([{ query, params }]) ? injected() : execute(query, params, ...rest),
      batch: (queries: Array<{ query: string; params?: unknown }>, ...rest: unknown[]) =>
        refused(queries) ? injected() : batch(queries, ...rest),
    });
  }

  /** The next `times` index writes of `inbox` fail (Infinity: until `stop`). */
  fail(inbox: InboxKey, times: number): void {
    this.failed = 0;
    this.failing.set(inbox, times);
  }

  stop(inbox: InboxKey): void {
    this.failing.delete(inbox);
  }
}

interface NotifyCall {
  user: string;
  badge: number;
  entries: Array<{ seq: number }>;
}

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

if (requireServices(await probeAll(), 'index catch-up by the owner (distributed)')) {
  const tag = randomBytes(4).toString('hex');
  const namespace = `catchup_${tag}`;
  const keyspace = `seqline_catchup_${tag}`;
  let receiver: HookReceiver;
  let infra: DistributedInfra;
  let messaging: DistributedMessaging;
  let workers: Workers;
  let faults: IndexWriteFaults;
  const hosts: ShardOwnerHost[] = [];

  /** A shard owner host as a worker builds it; started, serving every shard. */
  async function startHost(ownerId: string): Promise<ShardOwnerHost> {
    const host = shardOwnerHostOf(infra, messaging, {
      logger: silentLogger,
      ownerId,
      shardCount: SHARDS,
      leaseTtlMs: 2_000,
      ownerOptions: { indexCatchUps: { retry: { initialMs: 100, maxMs: 200 } } },
    });
    hosts.push(host);
    await host.start();
    await eventually('the host serves every shard', () => host.servingShards().length === SHARDS, 30_000);
    return host;
  }

  beforeAll(async () => {
    receiver = await startHookReceiver({ secret: SECRET });
    const config = loadDistributedConfig({
      SCYLLA_CONTACT_POINTS: CQL_CONTACT,
      SCYLLA_KEYSPACE: keyspace,
      REDIS_URL,
      NATS_URL,
      SEQLINE_SECRET: 'index-catch-up-test-secret',
      SEQLINE_SHARDS: String(SHARDS),
      SEQLINE_NAMESPACE: namespace,
      SEQLINE_OWNER_ID: `catchup-${tag}`,
      SEQLINE_HOOK_SECRET: SECRET,
      SEQLINE_NOTIFY_URL: receiver.url,
      SEQLINE_NOTIFY_WINDOW_MS: String(WINDOW_MS),
    });
    infra = await openDistributedInfra(config, silentLogger, { followPresence: true });
    faults = new IndexWriteFaults(infra.stores.client);
    messaging = await distributedMessagingDeps(infra, silentLogger);
    workers = await startWorkers(messaging.deps);
  }, 240_000);

  afterAll(async () => {
    await infra?.queue.stopConsuming();
    workers?.stop();
    for (const host of hosts) await host.close();
    await messaging?.offlineNotifier.close();
    await infra?.queue.close();
    await messaging?.close();
    await infra?.stores.client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`, [], { readTimeout: 120_000 }).catch(() => undefined);
    await infra?.close();
    await receiver?.close();
    await cleanupNamespace(namespace);
  }, 240_000);

  const calls = (tenant: string): NotifyCall[] =>
    receiver
      .accepted()
      .map((call) => call.json as NotifyCall & { tenant: string })
      .filter((body) => body.tenant === tenant);
  const deadNotifications = async (tenant: string) =>
    (await infra.queue.deadLetters()).filter((job) => job.queue === OFFLINE_NOTIFY_QUEUE && JSON.stringify(job.payload).includes(tenant));

  /** alice → bob (offline: no gateway holds him), one message; its seq in bob's inbox. */
  async function sendToBob(tenant: string): Promise<number> {
    const sent = await createMessaging(messaging.deps).send(
      { tenant, user: 'alice' },
      { appinfo: `m-${tenant}`, to: { user: 'bob' }, type: 'text', body: { text: 'hi' } },
    );
    const bob = inboxKey(tenant, 'bob');
    const head = await infra.stores.timeline.headSeq(bob);
    expect(sent.seq).toBeGreaterThan(0);
    return head;
  }

  describe('an index left behind is caught up by its owner, with no further append', () => {
    it('after a failed index write: the owner catches up, and the notification goes out with the badge counting the message', async () => {
      await startHost(`a-${tag}`);
      const tenant = `t${randomBytes(4).toString('hex')}`;
      const bob = inboxKey(tenant, 'bob');
      faults.fail(bob, 1);
      const seq = await sendToBob(tenant);
      await eventually('the append’s index write of bob’s inbox failed', () => faults.failed === 1, 15_000);

      // No further append to bob: the owner's own catch-up brings the index to the message.
      await eventually('bob’s index reaches the message', async () => (await infra.conversations.headSeq(bob)) >= seq, 15_000);
      await eventually('the notification', () => calls(tenant).length === 1, 15_000);
      const [call] = calls(tenant);
      expect(call?.user).toBe('bob');
      expect(call?.entries.map((e) => e.seq)).toEqual([seq]);
      expect(call?.badge).toBe(1);
      expect(await deadNotifications(tenant)).toEqual([]);
    }, 60_000);

    it('after a takeover: the new owner catches up the inboxes its predecessor recorded as left behind', async () => {
      const [previous] = hosts;
      if (previous === undefined) throw new Error('the first test starts the first host');
      const tenant = `t${randomBytes(4).toString('hex')}`;
      const bob = inboxKey(tenant, 'bob');
      // Every index write of bob fails while the first owner holds his shard: its own catch-ups too.
      faults.fail(bob, Number.POSITIVE_INFINITY);
      const seq = await sendToBob(tenant);
      await eventually('the append’s index write of bob’s inbox failed', () => faults.failed >= 1, 15_000);
      await previous.close(); // a graceful handover, its catch-ups undone
      faults.stop(bob);
      expect(await infra.conversations.headSeq(bob)).toBeLessThan(seq);

      await startHost(`b-${tag}`);
      await eventually('bob’s index reaches the message', async () => (await infra.conversations.headSeq(bob)) >= seq, 15_000);
      await eventually('the notification', () => calls(tenant).length === 1, 30_000);
      expect(calls(tenant)[0]?.badge).toBe(1);
      expect(await deadNotifications(tenant)).toEqual([]);
    }, 90_000);
  });
}
