/**
 * Seqline distributed for the peers bench: one worker and one gateway (the real entry points) on
 * the shared Cassandra, Redis and NATS, in a namespace of their own and a keyspace of their own
 * (BENCH_PEERS_KEYSPACE, migrated by the worker on first use and kept for the next run; user ids
 * are unique per run). The namespace's Redis keys and NATS streams are deleted afterwards.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { cleanNamespace, waitForServices } from '../distributed-stack.ts';
import { BENCH_SECRET, freePort } from '../support.ts';
import type { PeersOptions } from './options.ts';
import { startService, type Service } from './processes.ts';
import { SeqlineSystem, sharedStores, UNLIMITED } from './seqline.ts';

const WORKER_MAIN = fileURLToPath(new URL('../../apps/worker/src/main.ts', import.meta.url));
const GATEWAY_MAIN = fileURLToPath(new URL('../../apps/gateway/src/main.ts', import.meta.url));

export async function startSeqlineDistributed(o: PeersOptions): Promise<SeqlineSystem> {
  await waitForServices('before starting Seqline distributed');
  const namespace = `peers${Math.random().toString(36).slice(2, 10)}`;
  const base = {
    SEQLINE_SECRET: BENCH_SECRET,
    SEQLINE_NAMESPACE: namespace,
    SCYLLA_KEYSPACE: o.keyspace,
    SCYLLA_MIGRATE: '1',
    LOG_LEVEL: 'info',
    SEQLINE_LEASE_TTL_MS: '2000',
    HOST: '127.0.0.1',
    ...UNLIMITED,
  };
  const node = (main: string, flags: string[] = []) => [...flags, '--conditions=source', '--import', 'tsx', main];
  const started: Service[] = [];
  const stopAll = async () => {
    for (const s of [...started].reverse()) await s.stop();
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 3 });
    try {
      await redis.connect();
      await cleanNamespace(namespace, redis);
    } finally {
      redis.disconnect();
    }
  };
  try {
    // --max-semi-space-size=64 as in docker-compose.yml (docs/decisions.md, "Worker heap").
    const worker = await startService({
      label: 'seqline worker',
      command: process.execPath,
      args: node(WORKER_MAIN, ['--max-semi-space-size=64']),
      env: { ...base, PORT: String(await freePort()), SEQLINE_OWNER_ID: `${namespace}-w1` },
      readyText: 'seqline worker running',
      timeoutMs: 180_000, // a first run migrates the keyspace
    });
    started.push(worker);
    const port = await freePort();
    const gateway = await startService({
      label: 'seqline gateway',
      command: process.execPath,
      args: node(GATEWAY_MAIN),
      env: { ...base, PORT: String(port), SEQLINE_OWNER_ID: `${namespace}-g1` },
      readyText: 'seqline gateway listening',
      timeoutMs: 120_000,
    });
    started.push(gateway);
    const system = new SeqlineSystem(
      'seqline-distributed',
      'Seqline distributed',
      `ws://127.0.0.1:${port}/v1/ws`,
      [
        { label: 'seqline worker', pid: worker.pid },
        { label: 'seqline gateway', pid: gateway.pid },
      ],
      await sharedStores(),
      [
        `Seqline distributed: 1 worker + 1 gateway on the shared Cassandra, Redis and NATS (keyspace ${o.keyspace}, namespace ${namespace}), rate limits raised, default tiers`,
        '  the shared services also serve whatever else runs on this machine: their CPU is counted for Seqline, their RSS is not',
      ],
      stopAll,
    );
    await system.probe();
    return system;
  } catch (err) {
    await stopAll().catch(() => {});
    throw err;
  }
}
