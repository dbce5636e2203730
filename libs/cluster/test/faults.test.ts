/**
 * Fault runs (issue): a SIGSTOPped shard owner that wakes up after another took over, and
 * Redis FLUSHALL then a Redis restart during a send loop. Safety claims checked on the real
 * stores: no seq reused, none goes back, every send stored exactly once, a tailing reader
 * skips nothing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import type { AppendOutcome, InboxKey, TimelineStore } from '@seqline/core';
import type { ShardStatus } from '../src/index.ts';
import type { OwnerProcessConfig } from './fixtures/owner-process.ts';
import { clusterRig, readAll } from './support/cluster.ts';
import { firstNonIncreasing, inboxInShard, msg, sleep, waitFor } from './support/doubles.ts';
import type { LogRecord } from './support/doubles.ts';
import { serveStores } from './support/ipc-store.ts';
import {
  NATS_URL,
  PrivateRedis,
  REDIS_URL,
  newNats,
  newRedis,
  openTempStore,
  probeServices,
  redisServerAvailable,
  useSuiteServices,
} from './support/services.ts';
import type { TempStore } from './support/services.ts';
import type { RemoteInboxWriter } from '../src/index.ts';

const services = await probeServices();
const TTL = 1000;

interface SendLoop {
  inbox: InboxKey;
  outcomes: AppendOutcome[];
  appinfos: string[];
  done: Promise<void>;
}

/** Sequential sends to one inbox until stopped; every send must eventually succeed. */
function sendLoop(writer: RemoteInboxWriter, inbox: InboxKey, until: () => boolean): SendLoop {
  const loop: SendLoop = { inbox, outcomes: [], appinfos: [], done: Promise.resolve() };
  loop.done = (async () => {
    for (let i = 0; !until(); i++) {
      const appinfo = `${inbox}#${i}`;
      loop.appinfos.push(appinfo);
      loop.outcomes.push(...(await writer.append({ inbox, entries: [msg(appinfo)] })));
    }
  })();
  return loop;
}

/** Reads forward from its max seq like a syncing client; records every seq it was given. */
function tail(timeline: TimelineStore, inbox: InboxKey, until: () => boolean) {
  return (async () => {
    const seen: number[] = [];
    for (;;) {
      const done = until();
      for (;;) {
        const page = await timeline.readAfter({ inbox, afterSeq: seen.at(-1) ?? 0, limit: 100 });
        if (page.length === 0) break;
        seen.push(...page.map((e) => e.seq));
      }
      if (done) return seen;
      await sleep(5);
    }
  })();
}

async function checkLoop(timeline: TimelineStore, loop: SendLoop): Promise<void> {
  await loop.done;
  expect(loop.outcomes.length).toBeGreaterThan(10);
  // `duplicate: true` is allowed: a send whose write landed but whose reply was lost (owner
  // paused, request timed out) is retried and answered with its original seq (I3).
  expect(firstNonIncreasing(loop.outcomes.map((o) => o.seq))).toBeUndefined();
  const stored = await readAll(timeline, loop.inbox);
  expect(stored.map((e) => e.appinfo)).toEqual(loop.appinfos); // each once, in send order
  expect(stored.map((e) => e.seq)).toEqual(loop.outcomes.map((o) => o.seq));
}

describe.skipIf(!services.ok)('fault: SIGSTOP a shard owner past its lease', () => {
  const svc = useSuiteServices();
  let child: ChildProcess | undefined;

  afterAll(() => {
    if (child && child.exitCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
  });

  it('the woken owner refuses to write; no seq reused or going back; a tailing client skips nothing', async () => {
    const SHARDS = 4;
    const rig = clusterRig({ ...svc, shardCount: SHARDS, ttl: TTL });
    const shard = 1;
    const config: OwnerProcessConfig = {
      natsUrl: NATS_URL,
      redisUrl: REDIS_URL,
      ownerId: 'paused-owner',
      shardCount: SHARDS,
      desiredShards: [shard],
      leaseTtlMs: TTL,
      keyPrefix: rig.keyPrefix,
      subjectPrefix: rig.subjectPrefix,
    };
    const childLogs: LogRecord[] = [];
    let childStates: ShardStatus[] = [];
    child = fork(fileURLToPath(new URL('./fixtures/owner-process.ts', import.meta.url)), [], {
      execArgv: ['--conditions=source', '--import', 'tsx'],
      env: { ...process.env, OWNER_CONFIG: JSON.stringify(config) },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    serveStores(child, { timeline: svc.store.engine.timeline, ceilings: svc.store.engine.ceilings });
    child.on('message', (m: { type: string; record?: LogRecord; states?: ShardStatus[] }) => {
      if (m.type === 'log' && m.record) childLogs.push(m.record);
      if (m.type === 'states' && m.states) childStates = m.states;
    });
    const proc = child;
    try {
      await waitFor('child serves the shard', () => childStates.some((s) => s.shard === shard && s.state === 'serving'), 20_000);
      const childEpoch = childStates.find((s) => s.shard === shard)!.epoch;

      const writer = rig.writer({ requestTimeoutMs: 400, deadlineMs: 30_000 });
      const inbox = inboxInShard(`t${Date.now().toString(36)}`, shard, SHARDS);
      let stop = false;
      let tailerStop = false;
      const sent = sendLoop(writer, inbox, () => stop);
      const tailer = tail(svc.store.engine.timeline, inbox, () => tailerStop);
      await sleep(500);

      proc.kill('SIGSTOP');
      const successor = rig.host('successor', { desiredShards: [shard] });
      await successor.start();
      await waitFor('successor serves the shard', () => successor.servingShards().includes(shard), 20_000);
      const successorEpoch = successor.shardStates().find((s) => s.shard === shard)!.epoch;
      expect(successorEpoch).toBeGreaterThan(childEpoch);
      let mark = sent.outcomes.length;
      await waitFor('sends land at the successor', () => sent.outcomes.length >= mark + 3, 20_000);

      proc.kill('SIGCONT');
      await waitFor('woken owner drops the shard', () => childStates.every((s) => s.shard !== shard), 10_000);
      mark = sent.outcomes.length;
      await waitFor('sends go on after the wake-up', () => sent.outcomes.length >= mark + 10, 20_000);
      stop = true;
      await sent.done;
      tailerStop = true; // only now: a send still in flight must be seen too
      const seen = await tailer;

      await checkLoop(svc.store.engine.timeline, sent);
      // The tailer moved by max seq only and still saw every entry that exists.
      const stored = (await readAll(svc.store.engine.timeline, inbox)).map((e) => e.seq);
      expect(seen).toEqual(stored);
      // It refused rather than wrote: its lease was self-fenced or lost when it woke.
      const refusals = childLogs.filter((r) => r.msg === 'dropping shard' && r.obj.shard === shard);
      expect(refusals.length).toBeGreaterThan(0);
      expect(String(refusals[0]!.obj.reason)).toMatch(/self-fenced|lease taken by successor|fenced/);
    } finally {
      proc.send({ type: 'close' });
      await Promise.race([new Promise((r) => proc.once('exit', r)), sleep(5000)]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await rig.cleanup();
    }
  });
});

describe.skipIf(!services.ok || !redisServerAvailable())('fault: Redis FLUSHALL, then a Redis restart, during a send loop', () => {
  let nc: NatsConnection;
  let store: TempStore;
  let server: PrivateRedis;
  let redis: Redis;

  beforeAll(async () => {
    nc = await newNats();
    store = await openTempStore();
    // Private and with an AOF: after the restart our lease keys come back, only run_id tells.
    server = await PrivateRedis.start({ aof: true });
    redis = newRedis(server.url);
  });
  afterAll(async () => {
    await nc.close();
    redis.disconnect();
    await server.destroy();
    await store.close();
  });

  it('seqs only jump forward, nothing is duplicated or lost, and every shard gets a new epoch each time', async () => {
    const SHARDS = 4;
    const rig = clusterRig({ nc, redis, store, shardCount: SHARDS, ttl: TTL });
    const a = rig.host('host-a');
    const b = rig.host('host-b');
    try {
      await Promise.all([a.start(), b.start()]);
      const epochs = () =>
        new Map([...a.shardStates(), ...b.shardStates()].filter((s) => s.state === 'serving').map((s) => [s.shard, s.epoch]));
      await waitFor('all shards served', () => epochs().size === SHARDS, 20_000);
      const writer = rig.writer({ deadlineMs: 30_000 });
      const tenant = `t${Date.now().toString(36)}`;
      let stop = false;
      const loops = Array.from({ length: SHARDS }, (_, s) => sendLoop(writer, inboxInShard(tenant, s, SHARDS), () => stop));
      await sleep(500);

      for (const fault of ['flushall', 'restart'] as const) {
        const before = epochs();
        if (fault === 'flushall') await redis.flushall();
        else await server.restart();
        await waitFor(
          `every shard re-acquired after ${fault}`,
          () => {
            const now = epochs();
            return now.size === SHARDS && [...now].every(([s, e]) => e > (before.get(s) ?? 0));
          },
          30_000,
        );
        const marks = loops.map((l) => l.outcomes.length);
        await waitFor(`every loop progresses after ${fault}`, () => loops.every((l, i) => l.outcomes.length >= marks[i]! + 3), 30_000);
      }
      stop = true;
      for (const loop of loops) await checkLoop(store.engine.timeline, loop);
      expect(rig.logger.find('shard lease lost', { reason: 'lease key vanished' }).length).toBeGreaterThan(0);
      expect(rig.logger.find('shard lease lost', { reason: 'redis restarted or failed over (run_id changed)' }).length).toBeGreaterThan(0);
    } finally {
      await rig.cleanup();
    }
  });
});
