/**
 * The shared backing services (Cassandra, Redis, NATS on loopback, see docs/services.md) as the
 * distributed e2e and fault tests see them: a probe with the skip-or-fail rule, fault injection
 * through scripts/services.sh, and cleanup of one run's namespace.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Client } from 'cassandra-driver';
import { Redis } from 'ioredis';
import { requireServices as requireServicesOrSkip } from '@seqline/testing';

const run = promisify(execFile);

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const CQL_CONTACT = process.env.SCYLLA_CONTACT_POINTS ?? '127.0.0.1:9042';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

export type ServiceName = 'cassandra' | 'redis' | 'nats';
export type Probe = { ok: true } | { ok: false; reason: string };

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';

export async function probeCassandra(timeoutMs = 5000): Promise<Probe> {
  const client = new Client({
    contactPoints: CQL_CONTACT.split(','),
    localDataCenter: process.env.SCYLLA_LOCAL_DC ?? 'datacenter1',
    socketOptions: { connectTimeout: timeoutMs, readTimeout: timeoutMs },
  });
  try {
    await client.connect();
    await client.execute('SELECT release_version FROM system.local');
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `Cassandra at ${CQL_CONTACT}: ${firstLine(err)}` };
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

export async function probeRedis(): Promise<Probe> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  redis.on('error', () => {
    /* reported below */
  });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG' ? { ok: true } : { ok: false, reason: `Redis at ${REDIS_URL}: no PONG` };
  } catch (err) {
    return { ok: false, reason: `Redis at ${REDIS_URL}: ${firstLine(err)}` };
  } finally {
    redis.disconnect();
  }
}

export async function probeNats(): Promise<Probe> {
  try {
    const nc = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false });
    try {
      await (await jetstreamManager(nc)).getAccountInfo();
    } finally {
      await nc.close();
    }
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `NATS JetStream at ${NATS_URL}: ${firstLine(err)}` };
  }
}

export async function probeAll(): Promise<Probe> {
  const probes = await Promise.all([probeCassandra(), probeRedis(), probeNats()]);
  const problems = probes.flatMap((p) => (p.ok ? [] : [p.reason]));
  return problems.length === 0 ? { ok: true } : { ok: false, reason: problems.join('; ') };
}

/** Skips (or, with REQUIRE_SERVICES=1, fails) when Cassandra, Redis or NATS is down. */
export function requireServices(probe: Probe, what: string): boolean {
  return requireServicesOrSkip(probe, what, 'Cassandra, Redis and NATS');
}

/** `bash scripts/services.sh <cmd> <svc>` — stop/start/kill a shared service (fault tests only). */
export async function servicesSh(cmd: 'stop' | 'start' | 'kill' | 'status', svc: ServiceName): Promise<string> {
  const { stdout, stderr } = await run('bash', ['scripts/services.sh', cmd, svc], {
    cwd: REPO_ROOT,
    timeout: 300_000,
    maxBuffer: 4 * 1024 * 1024,
  });
  return `${stdout}${stderr}`;
}

/** Polls a probe until it answers (a restarted service), or throws after the timeout. */
export async function waitUntilUp(probe: () => Promise<Probe>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await probe();
    if (p.ok) return;
    if (Date.now() > deadline) throw new Error(`service still down after ${timeoutMs} ms: ${p.reason}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Makes sure a service answers (start is idempotent); for finally blocks of fault tests. */
export async function ensureUp(svc: ServiceName): Promise<void> {
  const probe = { cassandra: () => probeCassandra(), redis: probeRedis, nats: probeNats }[svc];
  if ((await probe()).ok) return;
  await servicesSh('start', svc).catch((err: unknown) => process.stderr.write(`services.sh start ${svc}: ${firstLine(err)}\n`));
  await waitUntilUp(probe, 240_000);
}

/** `redis-cli FLUSHALL` on the shared Redis (fault tests only: every namespace loses its keys). */
export async function redisFlushAll(): Promise<void> {
  const url = new URL(REDIS_URL);
  const { stdout } = await run('redis-cli', ['-h', url.hostname, '-p', url.port || '6379', 'FLUSHALL']);
  if (!stdout.includes('OK')) throw new Error(`FLUSHALL answered ${stdout}`);
}

/**
 * Deletes one run's NATS streams (`<NS>_JOBS`, `<NS>_DLQ`, `<NS>_JOB_FAILURES`) and Redis keys (`<ns>:*`), on the
 * shared services or on the ones `at` names (a run on private instances).
 */
export async function cleanupNamespace(namespace: string, at: { redisUrl?: string; natsUrl?: string } = {}): Promise<void> {
  try {
    const nc = await connect({ servers: at.natsUrl ?? NATS_URL, timeout: 5000 });
    try {
      const jsm = await jetstreamManager(nc);
      for (const suffix of ['JOBS', 'DLQ', 'JOB_FAILURES'])
        await jsm.streams.delete(`${namespace.toUpperCase()}_${suffix}`).catch(() => false);
    } finally {
      await nc.close();
    }
  } catch (err) {
    process.stderr.write(`cleanup of NATS streams for ${namespace} failed: ${firstLine(err)}\n`);
  }
  const redis = new Redis(at.redisUrl ?? REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => {
    /* best effort */
  });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } catch (err) {
    process.stderr.write(`cleanup of Redis keys for ${namespace} failed: ${firstLine(err)}\n`);
  } finally {
    redis.disconnect();
  }
}

/** Per consumer of a namespace's jobs stream: messages redelivered so far (JetStream's count). */
export async function jobRedeliveries(namespace: string): Promise<Record<string, number>> {
  const nc = await connect({ servers: NATS_URL, timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc);
    const out: Record<string, number> = {};
    for await (const info of jsm.consumers.list(`${namespace.toUpperCase()}_JOBS`)) out[info.name] = info.num_redelivered;
    return out;
  } finally {
    await nc.close();
  }
}

export const NATS_MONITOR = process.env.NATS_MONITOR_URL ?? `http://127.0.0.1:${process.env.NATS_HTTP_PORT ?? '8222'}`;

interface Connz {
  connections: { name?: string; in_msgs: number; subscriptions_list?: string[] }[];
}

async function connz(subs: boolean): Promise<Connz> {
  const res = await fetch(`${NATS_MONITOR}/connz?limit=4096${subs ? '&subs=1' : ''}`);
  return (await res.json()) as Connz;
}

/** NATS subjects a named client connection is subscribed to (monitoring endpoint /connz). */
export async function natsSubscriptions(connectionName: string): Promise<string[]> {
  return (await connz(true)).connections.filter((c) => c.name === connectionName).flatMap((c) => c.subscriptions_list ?? []);
}

/** Messages each named client connection has published so far (`in_msgs` of /connz). */
export async function natsPublished(connectionNames: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(connectionNames.map((n) => [n, 0]));
  for (const c of (await connz(false)).connections) if (c.name && out.has(c.name)) out.set(c.name, (out.get(c.name) ?? 0) + c.in_msgs);
  return out;
}
