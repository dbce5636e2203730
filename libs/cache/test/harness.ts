/** Test plumbing: the shared Redis (skip or fail when absent), private servers, closed ports. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import { freePort, requireServices } from '@seqline/testing';

export { freePort };
import type { Logger } from '@seqline/core';
import { createCacheRedisClient } from '../src/index.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function probeRedis(url = REDIS_URL): Promise<{ ok: true } | { ok: false; reason: string }> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `no Redis at ${url} (${err instanceof Error ? err.message : String(err)})` };
  } finally {
    redis.disconnect();
  }
}

/**
 * Registers `body` when Redis answers; otherwise one skipped test saying why, or — with
 * REQUIRE_SERVICES=1 — one failing test.
 */
export function describeWithRedis(name: string, probe: { ok: true } | { ok: false; reason: string }, body: () => void): void {
  if (requireServices(probe, name, 'Redis', 'start it with scripts/services.sh up or set REDIS_URL')) describe(name, body);
}

/** A cache client (as production builds it), resolved once it is ready. */
export async function connectRedis(url = REDIS_URL): Promise<Redis> {
  const redis = createCacheRedisClient({ url });
  await waitReady(redis);
  return redis;
}

export function waitReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}

/** A key prefix no other test (or other engineer's run) shares. */
export function uniquePrefix(): string {
  return `seqline-test:${randomBytes(5).toString('hex')}:`;
}

/**
 * One connection to the shared Redis and a key prefix of its own for a describe block: opened
 * before its tests, its keys deleted and the connection closed after them.
 */
export function useRedisPerSuite(): { readonly redis: Redis; readonly keyPrefix: string } {
  const keyPrefix = uniquePrefix();
  let redis: Redis | undefined;
  beforeAll(async () => {
    redis = await connectRedis();
  });
  afterAll(async () => {
    if (redis === undefined) return;
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });
  return {
    keyPrefix,
    get redis(): Redis {
      if (redis === undefined) throw new Error('useRedisPerSuite: Redis is only open inside tests');
      return redis;
    },
  };
}

export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

export function tempDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `seqline-cache-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A TCP server that accepts connections and never answers: a hung Redis. */
export async function blackHole(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `redis://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A redis-server of our own (FLUSHALL and kill -9 must not hit the shared one). RDB only,
 * written when the test says SAVE, so a restart can bring back an older copy on purpose.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  private readonly data = tempDir('redis');

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const server = new PrivateRedis(await freePort());
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** SIGKILL (no shutdown save), then a new process on the same port and data dir. */
  async crashAndRestart(): Promise<void> {
    await this.crash();
    await this.restart();
  }

  crash(): Promise<void> {
    return this.kill();
  }

  /** Starts again on the same port and data dir (loading the last SAVE, if any). */
  restart(): Promise<void> {
    return this.launch();
  }

  async stop(): Promise<void> {
    await this.kill();
    this.data.remove();
  }

  private async launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.data.dir,
        '--dbfilename',
        'dump.rdb',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if ((await probeRedis(this.url)).ok) return;
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`private redis-server on ${this.port} did not start`);
  }

  private async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

export async function hasRedisServerBinary(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Records warnings; children share the record. */
export function recordingLogger(): Logger & { warnings: Array<{ obj: object; msg?: string }> } {
  const warnings: Array<{ obj: object; msg?: string }> = [];
  const logger = {
    warnings,
    debug() {},
    info() {},
    error() {},
    warn(obj: object, msg?: string) {
      warnings.push({ obj, ...(msg === undefined ? {} : { msg }) });
    },
    child() {
      return logger;
    },
  };
  return logger;
}
