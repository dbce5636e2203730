/**
 * A worker's own small HTTP server, for orchestrators and Prometheus: `GET /healthz` (liveness:
 * 200 once started, with the shards it serves), `GET /readyz` (readiness: 200 only while it
 * serves every shard it should, else 503) and `GET /metrics`. A worker has no client port, so
 * this is opt-in (SEQLINE_WORKER_HTTP_PORT).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { PushBusStats } from '@seqline/bus';
import type { OwnerTallies } from '@seqline/cluster';
import { registerBoundGauges, type BoundReport } from '@seqline/runtime/bounds';
import { registerOwnerMetrics } from './owner-metrics.ts';

/** What the endpoint reports on; a ShardOwnerHost is one. */
export interface ShardSource {
  servingShards(): number[];
  /** Whether it serves every shard it should (ShardOwnerHost.readiness). */
  readiness(): { ready: boolean; serving: number[]; pending: number[] };
  /** appinfos held in memory to answer resends (bounded per process). */
  readonly rememberedAppinfos: number;
  /** inboxes and groups whose current seq is held in memory (bounded per process). */
  readonly rememberedSeqKeys: number;
  /** inboxes whose head and queue are held in memory (bounded per process). */
  readonly cachedInboxes: number;
  /** its owners' index catch-ups and unsettled appends (owner-metrics.ts). */
  readonly ownerTallies: OwnerTallies;
}

export interface WorkerHttp {
  port: number;
  registry: Registry;
  close(): Promise<void>;
}

export interface WorkerHttpOptions {
  port: number;
  host: string;
  shards: ShardSource;
  /** Job pools by name (the worker's `Workers.stats().pools`): jobs running and waiting in each. */
  pools?: () => Record<string, { running: number; waiting: number }>;
  /** The push bus's publishes and presence view (huge-group pushes routed per gateway). */
  push?: () => PushBusStats;
  /** The worker's SEQLINE_MAX_* bounds (worker-bounds.ts): `seqline_bound_limit` and `seqline_bound_fill`. */
  bounds?: Readonly<Record<string, BoundReport>>;
  /**
   * Node process metrics (prom-client's defaults) next to the worker's own. Default on: only a
   * worker process's entry point starts this endpoint, once (unlike gateways, which tests start
   * many of per process).
   */
  processMetrics?: boolean;
}

export async function startWorkerHttp(options: WorkerHttpOptions): Promise<WorkerHttp> {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'seqline_worker_shards_served',
    help: 'Inbox shards this worker holds a writable lease for',
    registers: [registry],
    collect() {
      this.set(options.shards.servingShards().length);
    },
  });
  new Gauge({
    name: 'seqline_worker_recent_appinfos',
    help: 'appinfos held in memory to answer resends without the store (all shards)',
    registers: [registry],
    collect() {
      this.set(options.shards.rememberedAppinfos);
    },
  });
  new Gauge({
    name: 'seqline_worker_seq_keys',
    help: 'inboxes and groups whose current seq is held in memory (all shards)',
    registers: [registry],
    collect() {
      this.set(options.shards.rememberedSeqKeys);
    },
  });
  new Gauge({
    name: 'seqline_worker_cached_inboxes',
    help: 'inboxes whose head and queue are held in memory (all shards)',
    registers: [registry],
    collect() {
      this.set(options.shards.cachedInboxes);
    },
  });
  registerOwnerMetrics(registry, () => options.shards.ownerTallies);
  if (options.bounds) registerBoundGauges(registry, options.bounds);
  const pools = options.pools;
  if (pools) {
    new Gauge({
      name: 'seqline_worker_jobs_running',
      help: 'jobs running, by pool (fanout tiers, notify, receipts)',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        for (const [pool, s] of Object.entries(pools())) this.set({ pool }, s.running);
      },
    });
    new Gauge({
      name: 'seqline_worker_jobs_waiting',
      help: 'jobs taken from the queue and waiting for a slot, by pool',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        for (const [pool, s] of Object.entries(pools())) this.set({ pool }, s.waiting);
      },
    });
  }
  const push = options.push;
  if (push) {
    new Counter({
      name: 'seqline_worker_push_publishes_total',
      help: 'push messages published on NATS, one per inbox or one per gateway (routed)',
      labelNames: ['via'],
      registers: [registry],
      collect() {
        const { published } = push();
        this.reset();
        this.inc({ via: 'inbox' }, published.inbox);
        this.inc({ via: 'gateway' }, published.gateway);
      },
    });
    new Gauge({
      name: 'seqline_worker_presence_gateways',
      help: 'gateways whose connected inboxes this worker follows',
      registers: [registry],
      collect() {
        this.set(push().presence?.gateways ?? 0);
      },
    });
    new Gauge({
      name: 'seqline_worker_presence_inboxes',
      help: 'connected inboxes this worker knows of, over all gateways',
      registers: [registry],
      collect() {
        this.set(push().presence?.inboxes ?? 0);
      },
    });
  }
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?', 1)[0];
    if (req.method === 'GET' && path === '/healthz') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, shards: options.shards.servingShards().length }));
    } else if (req.method === 'GET' && path === '/readyz') {
      const { ready, serving, pending } = options.shards.readiness();
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify(ready ? { ok: true, shards: serving.length } : { ok: false, shards: serving.length, pending: pending.length }));
    } else if (req.method === 'GET' && path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return { port: (server.address() as AddressInfo).port, registry, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
