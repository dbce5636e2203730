/**
 * Real services for the cluster tests: the shared Redis and NATS on loopback (unique key and
 * subject prefixes per test run), a private throwaway redis-server for tests that FLUSHALL or
 * restart Redis (so suites of other packages sharing the main Redis are not disturbed), and
 * an embedded LMDB engine in a temp dir for the timeline and the ceilings.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '@seqline/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { afterAll, beforeAll } from 'vitest';
import { sleep } from './doubles.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const NATS_URL = process.env.NATS_URL ?? '127.0.0.1:4222';
const required = process.env.REQUIRE_SERVICES === '1';

export interface Availability {
  ok: boolean;
  reason: string;
}

/** Probes Redis and NATS once. Unreachable → skip (or fail with REQUIRE_SERVICES=1). */
export async function probeServices(): Promise<Availability> {
  const problems: string[] = [];
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    problems.push(`Redis at ${REDIS_URL}: ${String(err)}`);
  } finally {
    redis.disconnect();
  }
  try {
    const nc = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false });
    await nc.close();
  } catch (err) {
    problems.push(`NATS at ${NATS_URL}: ${String(err)}`);
  }
  const ok = problems.length === 0;
  const reason = ok ? 'services up' : `${problems.join('; ')} (start them with: bash scripts/services.sh up)`;
  if (!ok && required) throw new Error(`REQUIRE_SERVICES=1 but ${reason}`);
  if (!ok) console.warn(`[cluster tests] SKIPPED: ${reason}`);
  return { ok, reason };
}

export const uniqueId = (prefix: string): string => `${prefix}${randomBytes(5).toString('hex')}`;

export function newRedis(url = REDIS_URL): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 3, retryStrategy: (n) => Math.min(50 * n, 500) });
  redis.on('error', () => {
    /* reconnects by itself; tests restart servers on purpose */
  });
  return redis;
}

export function newNats(): Promise<NatsConnection> {
  return connect({ servers: NATS_URL, maxReconnectAttempts: -1 });
}

/** Deletes every key under a test prefix (the shared Redis is never flushed). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

export interface TempStore {
  engine: EmbeddedEngine;
  dir: string;
  close(): Promise<void>;
}

/** The shared NATS and Redis and a temp store, as one suite uses them. */
export interface SuiteServices {
  readonly nc: NatsConnection;
  readonly redis: Redis;
  readonly store: TempStore;
}

/**
 * Opens the suite's services in a `beforeAll` and closes them in an `afterAll`; call it at the
 * top of a `describe`. The suite's own `afterAll` hooks run first (vitest runs them in reverse),
 * so they may still use the services.
 */
export function useSuiteServices(): SuiteServices {
  let opened: SuiteServices | undefined;
  beforeAll(async () => {
    opened = { nc: await newNats(), redis: newRedis(), store: await openTempStore() };
  });
  afterAll(async () => {
    if (!opened) return;
    await opened.nc.close();
    opened.redis.disconnect();
    await opened.store.close();
  });
  const get = (): SuiteServices => {
    if (!opened) throw new Error('suite services are opened in beforeAll: use them inside hooks and tests');
    return opened;
  };
  return {
    get nc() {
      return get().nc;
    },
    get redis() {
      return get().redis;
    },
    get store() {
      return get().store;
    },
  };
}

export async function openTempStore(dir?: string): Promise<TempStore> {
  const path = dir ?? (await mkdtemp(join(tmpdir(), 'seqline-cluster-')));
  const engine = await openEmbeddedEngine({ dir: path });
  return {
    engine,
    dir: path,
    async close() {
      await engine.close();
      if (!dir) await rm(path, { recursive: true, force: true });
    },
  };
}

/** Whether a redis-server binary is on PATH; with REQUIRE_SERVICES=1 its absence fails instead of skipping. */
export function redisServerAvailable(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    if (required) throw new Error('REQUIRE_SERVICES=1 but no redis-server binary on PATH (bash scripts/services.sh up installs it)');
    return false;
  }
}

/**
 * A throwaway redis-server on a free port. With `aof` its data (lease keys included) survives
 * a restart, the case where only the run_id tells that the server went away.
 */
export class PrivateRedis {
  private proc: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly aof: boolean,
  ) {}

  static async start(options: { aof?: boolean } = {}): Promise<PrivateRedis> {
    const dir = await mkdtemp(join(tmpdir(), 'seqline-redis-'));
    const server = new PrivateRedis(await freePort(), dir, options.aof ?? false);
    await server.up();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const persistence = this.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    this.proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', ...persistence],
      { stdio: 'ignore' },
    );
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {
      /* not up yet */
    });
    try {
      for (let i = 0; ; i++) {
        try {
          await probe.connect();
          await probe.ping();
          return;
        } catch (err) {
          probe.disconnect();
          if (i > 100) throw err;
          await sleep(50);
        }
      }
    } finally {
      probe.disconnect();
    }
  }

  /** SIGTERM (redis-server saves the AOF and exits), then waits for the exit. */
  async down(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited;
  }

  async restart(): Promise<void> {
    await this.down();
    await this.up();
  }

  async destroy(): Promise<void> {
    await this.down();
    await rm(this.dir, { recursive: true, force: true });
  }
}
