/**
 * The distributed stack for the benches: one worker and one gateway as child processes (the real
 * entry points) on the loopback Cassandra, Redis and NATS, in a namespace of their own; plus
 * service waits and the clean-up of that namespace (NATS streams, Redis keys).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect as netConnect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { BENCH_SECRET, freePort, sleep, watchChild } from './support.ts';

const WORKER_MAIN = fileURLToPath(new URL('../apps/worker/src/main.ts', import.meta.url));
const GATEWAY_MAIN = fileURLToPath(new URL('../apps/gateway/src/main.ts', import.meta.url));
export const BENCH_KEYSPACE = 'seqline_bench';
export const SERVICES = { cassandra: 9042, redis: 6379, nats: 4222 } as const;

/** Services restarted by someone else (fault tests) are waited for; each wait is reported. */
export const disturbances: string[] = [];

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(1000, () => done(false));
  });
}

/** Polls until every service accepts connections (up to 3 min); notes how long it waited. */
export async function waitForServices(during: string): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const down: string[] = [];
    for (const [name, port] of Object.entries(SERVICES)) if (!(await portOpen(port))) down.push(name);
    if (down.length === 0) break;
    if (Date.now() - t0 > 180_000) throw new Error(`services down for 3 min: ${down.join(', ')}`);
    if (Date.now() - t0 < 600) disturbances.push(`${down.join(', ')} down ${during}`);
    await sleep(500);
  }
  const waited = Date.now() - t0;
  if (waited > 500) disturbances.push(`waited ${(waited / 1000).toFixed(1)} s for the services ${during}`);
}

interface Child {
  proc: ChildProcess;
  output: () => string;
}

/** BENCH_SCHED_BATCH=0 starts the children under SCHED_OTHER, as does a machine where chrt (util-linux) cannot set SCHED_BATCH. */
const SCHED_BATCH = process.env.BENCH_SCHED_BATCH !== '0' && spawnSync('chrt', ['--batch', '0', 'true']).status === 0;

/** As in docker-compose.yml and the README (docs/decisions.md, "Worker heap"). */
const WORKER_NODE_FLAGS = ['--max-semi-space-size=64'];

function startChild(main: string, readyText: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<Child> {
  // BENCH_NODE_ARGS: extra node flags for the children, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const extra = [...nodeFlags, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg.length > 0)];
  const args = [...extra, '--conditions=source', '--import', 'tsx', main];
  // Under SCHED_BATCH like the services (scripts/services.sh, docs/services.md); the load
  // generator (this process) stays SCHED_OTHER, so it still reads a reply the moment it lands.
  const [command, argv] = SCHED_BATCH ? ['chrt', ['--batch', '0', process.execPath, ...args]] : [process.execPath, args];
  const proc = spawn(command, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  process.once('exit', () => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  const { ready, tail } = watchChild(proc, main, readyText, 60_000);
  return ready.then(() => ({ proc, output: tail }));
}

async function stopChild(c: Child): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => c.proc.once('exit', () => r()));
  c.proc.kill('SIGTERM');
  const killer = setTimeout(() => c.proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
}

export interface DistributedStack {
  namespace: string;
  gatewayUrl: string;
  /** The child processes, for CPU accounting. */
  pids: { gateway: number; worker: number };
  /** The last 8 kB a child wrote (its pino lines), to explain a lost socket. */
  logTail(child: 'gateway' | 'worker'): string;
  /** Deletes the timeline-cache keys of the namespace (the next read of any inbox misses). */
  flushTimelineCache(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * LOG_LEVEL is info, not warn: the ready lines are info lines, and neither process logs per
 * request at info. Short leases so a fresh worker's shards become writable within seconds.
 */
export async function startDistributedStack(): Promise<DistributedStack> {
  await waitForServices('before starting the stack');
  const namespace = `bench${Math.random().toString(36).slice(2, 10)}`;
  const base = {
    SEQLINE_SECRET: BENCH_SECRET,
    SEQLINE_NAMESPACE: namespace,
    SCYLLA_KEYSPACE: BENCH_KEYSPACE,
    LOG_LEVEL: 'info',
    SEQLINE_LEASE_TTL_MS: '2000',
    HOST: '127.0.0.1',
  };
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 3 });
  await redis.connect();
  const started: Child[] = [];
  try {
    started.push(
      await startChild(
        WORKER_MAIN,
        'seqline worker running',
        { ...base, PORT: String(await freePort()), SEQLINE_OWNER_ID: `${namespace}-w1` },
        WORKER_NODE_FLAGS,
      ),
    );
    const port = await freePort();
    started.push(
      await startChild(GATEWAY_MAIN, 'seqline gateway listening', { ...base, PORT: String(port), SEQLINE_OWNER_ID: `${namespace}-g1` }),
    );
    const children = { worker: started[0], gateway: started[1] };
    return {
      namespace,
      gatewayUrl: `ws://127.0.0.1:${port}/v1/ws`,
      pids: { worker: started[0]?.proc.pid ?? 0, gateway: started[1]?.proc.pid ?? 0 },
      logTail: (child) => children[child]?.output() ?? '',
      async flushTimelineCache() {
        let deleted = 0;
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}:tl:*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) deleted += await redis.del(...keys);
        } while (cursor !== '0');
        return deleted;
      },
      async stop() {
        for (const c of started.reverse()) await stopChild(c);
        await cleanNamespace(namespace, redis).catch((err: unknown) =>
          disturbances.push(`clean-up of ${namespace} failed: ${String(err)}`),
        );
        redis.disconnect();
      },
    };
  } catch (err) {
    for (const c of started) await stopChild(c);
    redis.disconnect();
    throw err;
  }
}

/** Deletes the NATS streams and Redis keys of a bench namespace. */
export async function cleanNamespace(namespace: string, redis: Redis): Promise<void> {
  const nc = await natsConnect({ servers: 'nats://127.0.0.1:4222' });
  try {
    const jsm = await jetstreamManager(nc);
    const prefix = namespace.toUpperCase();
    for await (const info of jsm.streams.list()) {
      if (info.config.name.toUpperCase().startsWith(prefix)) await jsm.streams.delete(info.config.name);
    }
  } finally {
    await nc.close();
  }
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
