/**
 * Whether appends can be served right now, as a caller of the shard owners sees it (a gateway's
 * `/readyz`): one `{op: 'ready', shard}` probe per shard on its own `inbox.append.<shard>`
 * subject. An owner answers it only while it serves that shard and passes the checks a write
 * passes (not waiting out a previous owner, not self-fenced); no owner, a slow one or a refusal
 * leave the shard unserved. Concurrent checks share one round of probes, and a ready answer is
 * reused for `cacheMs`, so a busy readiness endpoint of a serving deployment costs the owners at
 * most one probe per shard per `cacheMs`; a not-ready answer is not reused, so the endpoint turns
 * ready as soon as the last shard is served.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_SHARD_COUNT } from '@seqline/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { RequestMux } from './request-mux.ts';
import { DEFAULT_SUBJECT_PREFIX, decodeReply, encodeJson, shardSubject } from './wire.ts';

export interface ShardReadinessOptions {
  nc: NatsConnection;
  /** Must equal the owners'. Default 64. */
  shardCount?: number;
  /** Default `inbox.append`. */
  subjectPrefix?: string;
  /** How long one probe waits for its owner. Default 1 000 ms. */
  timeoutMs?: number;
  /** How long a ready answer is reused. Default 1 000 ms. */
  cacheMs?: number;
}

export interface ShardsReadiness {
  /** Every shard has an owner that would take an append now. */
  ready: boolean;
  shardCount: number;
  /** Shards without such an owner, ascending. */
  unserved: number[];
}

export class ShardReadiness {
  private readonly shardCount: number;
  private readonly subjectPrefix: string;
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private mux: RequestMux | undefined;
  private last: { at: number; answer: ShardsReadiness } | undefined;
  private running: Promise<ShardsReadiness> | undefined;
  private closed = false;

  constructor(private readonly options: ShardReadinessOptions) {
    this.shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
    this.subjectPrefix = options.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX;
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.cacheMs = options.cacheMs ?? 1000;
  }

  check(): Promise<ShardsReadiness> {
    if (this.closed) return Promise.resolve(this.allUnserved());
    const last = this.last;
    if (last && performance.now() - last.at < this.cacheMs) return Promise.resolve(last.answer);
    this.running ??= this.probeAll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  close(): void {
    this.closed = true;
    this.mux?.close();
  }

  private async probeAll(): Promise<ShardsReadiness> {
    if (this.options.nc.isClosed()) return this.allUnserved();
    this.mux ??= new RequestMux(this.options.nc);
    const mux = this.mux;
    const shards = Array.from({ length: this.shardCount }, (_, shard) => shard);
    const served = await Promise.all(
      shards.map(async (shard) => {
        try {
          const msg = await mux.request(shardSubject(this.subjectPrefix, shard), encodeJson({ op: 'ready', shard }), this.timeoutMs);
          return decodeReply(msg.data).ok;
        } catch {
          return false; // no responders, timeout, a malformed reply
        }
      }),
    );
    const unserved = shards.filter((shard) => served[shard] !== true);
    const answer = { ready: unserved.length === 0, shardCount: this.shardCount, unserved };
    this.last = answer.ready ? { at: performance.now(), answer } : undefined;
    return answer;
  }

  private allUnserved(): ShardsReadiness {
    return { ready: false, shardCount: this.shardCount, unserved: Array.from({ length: this.shardCount }, (_, s) => s) };
  }
}
