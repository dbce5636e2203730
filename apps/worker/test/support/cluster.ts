/**
 * Runs the distributed stack as real processes: N workers (`apps/worker/src/main.ts`) and M
 * gateways (`apps/gateway/src/main.ts`), one namespace per run, so runs sharing the services
 * never see each other's Redis keys, NATS subjects or streams. Faults: kill -9, SIGSTOP/SIGCONT.
 */
import { randomBytes } from 'node:crypto';
import { freePort } from '../../../server/test/child-server.ts';
import { SECRET } from '../../../server/test/harness.ts';
import { NodeProcess } from './node-process.ts';
import { cleanupNamespace } from './services.ts';

export { NodeProcess, type LogRecord, type Role } from './node-process.ts';

export const E2E_KEYSPACE = process.env.SEQLINE_E2E_KEYSPACE ?? 'seqline_e2e';
export const SHARDS = 64;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const uniqueId = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

export interface ClusterOptions {
  workers: number;
  gateways: number;
  leaseTtlMs?: number;
  /** Extra env for every process. */
  env?: Record<string, string>;
}

/** A namespace's worth of processes sharing the local services. */
export class Cluster {
  readonly workers: NodeProcess[] = [];
  readonly gateways: NodeProcess[] = [];
  readonly namespace = uniqueId('e2e');
  readonly tenant = uniqueId('t');
  readonly leaseTtlMs: number;
  private readonly baseEnv: Record<string, string>;

  private constructor(options: ClusterOptions) {
    this.leaseTtlMs = options.leaseTtlMs ?? 2000;
    this.baseEnv = {
      SEQLINE_NAMESPACE: this.namespace,
      SCYLLA_KEYSPACE: E2E_KEYSPACE,
      SCYLLA_MIGRATE: '1',
      SEQLINE_SECRET: SECRET,
      SEQLINE_LEASE_TTL_MS: String(this.leaseTtlMs),
      SEQLINE_SHARDS: String(SHARDS),
      HOST: '127.0.0.1',
      SEQLINE_RATE_PER_SEC: '100000',
      SEQLINE_RATE_BURST: '100000',
      LOG_LEVEL: 'info',
      ...options.env,
    };
  }

  /** Starts the workers, then the gateways, and waits until every shard is served, balanced and quiet. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(options);
    try {
      for (let i = 0; i < options.workers; i++) {
        const name = `w${i + 1}-${cluster.namespace}`;
        const port = await freePort(); // its /healthz and /metrics
        cluster.workers.push(
          new NodeProcess('worker', name, { ...cluster.baseEnv, SEQLINE_OWNER_ID: name, SEQLINE_WORKER_HTTP_PORT: String(port) }, port),
        );
      }
      for (let i = 0; i < options.gateways; i++) {
        const name = `g${i + 1}-${cluster.namespace}`;
        const port = await freePort();
        cluster.gateways.push(new NodeProcess('gateway', name, { ...cluster.baseEnv, SEQLINE_OWNER_ID: name, PORT: String(port) }, port));
      }
      // The first worker alone migrates (once per keyspace); the rest start side by side.
      const [first, ...rest] = cluster.workers;
      await first?.start(120_000);
      await Promise.all([...rest, ...cluster.gateways].map((p) => p.start()));
      await cluster.waitBalanced();
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  /** Every shard served by exactly one live worker, each worker serving some, no move for 2 ttl. */
  async waitBalanced(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastSnapshot = '';
    let quietSince = Date.now();
    for (;;) {
      const live = this.workers.filter((w) => w.alive);
      const snapshot = live.map((w) => [...w.serving].sort((a, b) => a - b).join(',')).join('|');
      if (snapshot !== lastSnapshot) {
        lastSnapshot = snapshot;
        quietSince = Date.now();
      }
      const total = live.reduce((n, w) => n + w.serving.size, 0);
      const union = new Set(live.flatMap((w) => [...w.serving]));
      const balanced = union.size === SHARDS && total === SHARDS && live.every((w) => w.serving.size > 0);
      if (balanced && Date.now() - quietSince >= 2 * this.leaseTtlMs) return;
      if (Date.now() > deadline) {
        throw new Error(`shards not balanced after ${timeoutMs} ms: ${live.map((w) => `${w.name}=${w.serving.size}`).join(' ')}`);
      }
      await sleep(100);
    }
  }

  /**
   * Waits until every shard has been (re)served since `since` — a new lease, a new epoch — and
   * is served now; returns, per shard, the newest epoch before `since` and the first after.
   */
  async waitAllServedSince(since: number, timeoutMs: number): Promise<{ shard: number; before: number; after: number }[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const records = this.workers.flatMap((w) => w.logged('serving shard'));
      const served = new Set(this.workers.filter((w) => w.alive).flatMap((w) => [...w.serving]));
      const fresh = new Set(records.filter((r) => r.time >= since).map((r) => r.shard));
      if (served.size === SHARDS && fresh.size === SHARDS) {
        return Array.from({ length: SHARDS }, (_, shard) => {
          const of = records.filter((r) => r.shard === shard);
          const before = Math.max(0, ...of.filter((r) => r.time < since).map((r) => r.epoch ?? 0));
          const after = Math.min(...of.filter((r) => r.time >= since).map((r) => r.epoch ?? 0));
          return { shard, before, after };
        });
      }
      if (Date.now() > deadline) throw new Error(`only ${fresh.size}/${SHARDS} shards re-served within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** Warnings and errors each process logged (the newest `perProcess`), for a failed test's report. */
  report(perProcess = 25): string {
    return [...this.workers, ...this.gateways]
      .map((p) => {
        const lines = p.records
          .filter((r) => r.level >= 40)
          .slice(-perProcess)
          .map((r) =>
            `  ${new Date(r.time).toISOString()} ${r.msg} ${JSON.stringify({ ...r, level: undefined, time: undefined, msg: undefined, pid: undefined, hostname: undefined })}`.slice(
              0,
              400,
            ),
          );
        return `${p.name} (${p.alive ? 'alive' : 'gone'}), ${p.records.filter((r) => r.level >= 40).length} warnings/errors:\n${lines.join('\n')}`;
      })
      .join('\n');
  }

  /** The live worker serving `shard` now, if any. */
  ownerOf(shard: number): NodeProcess | undefined {
    return this.workers.find((w) => w.alive && w.serving.has(shard));
  }

  async close(): Promise<void> {
    await Promise.all([...this.gateways, ...this.workers].map((p) => p.terminate().catch(() => undefined)));
    await cleanupNamespace(this.namespace, { redisUrl: this.baseEnv.REDIS_URL, natsUrl: this.baseEnv.NATS_URL });
  }
}
