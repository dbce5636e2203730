/**
 * The caller side of `inbox.append.<shard>`, shared by RemoteInboxWriter and
 * RemoteGroupStreamWriter: routes a request to the owner of `shardOf(key)` and retries it
 * until a deadline. Retrying is safe because every write op is idempotent by appinfo (a retry
 * of an append that did land returns the original seq), so no-responders, timeouts and
 * retryable owner errors (handover, fencing, overload) are retried with full-jitter backoff
 * (cut short when the shard's new owner announces itself, shard-notices.ts);
 * final errors are rethrown at once as their SeqlineError class; at the deadline the caller
 * gets OverloadedError.
 */
import { performance } from 'node:perf_hooks';
import { OverloadedError, TooLargeError, shardOf, silentLogger, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type { Logger, NewEntry } from '@seqline/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { fromWireError } from './errors.ts';
import { RequestMux } from './request-mux.ts';
import { ServingWatch } from './shard-notices.ts';
import { DEFAULT_SUBJECT_PREFIX, decodeReply, encodeJson, encodeWithEntries, routingKey, shardSubject } from './wire.ts';
import type { AppendHead, InboxReply, ShardRequest } from './wire.ts';

/** Options of both remote writers. */
export interface RemoteWriterOptions {
  nc: NatsConnection;
  /** Must equal the owners' shardCount. Default 64. */
  shardCount?: number;
  /** Default `inbox.append`. */
  subjectPrefix?: string;
  /** One request's timeout. Default 3 s. */
  requestTimeoutMs?: number;
  /**
   * Total time a call keeps retrying. Default 20 s: a planned handover takes well under a second,
   * but one after a lost lease costs up to ttl/3 (noticing) + ttl + margin (wait-out) ≈ 14.4 s at
   * the default lease ttl (10 s).
   */
  deadlineMs?: number;
  /** First retry delay, doubled per attempt up to `maxBackoffMs` (full jitter). Default 50 ms. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Most entries per request. Default 512 (the owner's merge limit). */
  maxEntriesPerRequest?: number;
  logger?: Logger;
}

export type OkReply = InboxReply & { ok: true };

/** Leaves room under NATS max_payload for the request envelope. */
const ENVELOPE_BYTES = 1024;

export class ShardRequester {
  readonly shardCount: number;
  private readonly nc: NatsConnection;
  private readonly subjectPrefix: string;
  private readonly requestTimeoutMs: number;
  private readonly deadlineMs: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxEntries: number;
  private readonly logger: Logger;
  private closed = false;
  private mux: RequestMux | undefined;
  /** Ends a backoff early when the shard's new owner announces itself (a handover). */
  private readonly serving: ServingWatch;

  /** `what` names the callee in errors and logs (`inbox owner`, `group stream owner`). */
  constructor(
    options: RemoteWriterOptions,
    component: string,
    private readonly what: string,
  ) {
    this.nc = options.nc;
    this.shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
    this.subjectPrefix = options.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 3000;
    this.deadlineMs = options.deadlineMs ?? 20_000;
    this.initialBackoffMs = options.initialBackoffMs ?? 50;
    this.maxBackoffMs = options.maxBackoffMs ?? 1000;
    this.maxEntries = options.maxEntriesPerRequest ?? 512;
    this.logger = (options.logger ?? silentLogger).child({ component });
    this.serving = new ServingWatch(this.nc, this.subjectPrefix);
  }

  /** Later calls fail with OverloadedError; the NATS connection belongs to the caller. */
  close(): void {
    this.closed = true;
    this.mux?.close();
    this.serving.close();
  }

  /**
   * One request, retried until it succeeds, fails finally, or the deadline passes. `payload`
   * is `req` already encoded (see appendRequests).
   */
  async call(req: ShardRequest, payload: Uint8Array = encodeJson(req)): Promise<OkReply> {
    if (this.closed) throw new OverloadedError(`${this.what} writer is closed`);
    const key = routingKey(req);
    const shard = shardOf(key, this.shardCount);
    const subject = shardSubject(this.subjectPrefix, shard);
    const deadline = performance.now() + this.deadlineMs;
    let lastError = 'no attempt';
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) break;
      let reply: InboxReply;
      try {
        this.mux ??= new RequestMux(this.nc);
        const msg = await this.mux.request(subject, payload, Math.max(1, Math.min(this.requestTimeoutMs, remaining)));
        reply = decodeReply(msg.data);
      } catch (err) {
        if (this.nc.isClosed()) throw new OverloadedError(`${this.what} unavailable: NATS connection closed`);
        // No responders (no owner yet), timeout (owner paused or gone), malformed reply.
        lastError = err instanceof Error ? err.message : String(err);
        await this.backoff(attempt, deadline, shard);
        continue;
      }
      if (reply.ok) return reply;
      if (!reply.error.retryable) throw fromWireError(reply.error);
      lastError = `${reply.error.code}: ${reply.error.message}`;
      await this.backoff(attempt, deadline, shard);
    }
    this.logger.warn({ shard, op: req.op, key, lastError }, `${this.what} unavailable`);
    throw new OverloadedError(`${this.what} unavailable (shard ${shard}: ${lastError})`);
  }

  /**
   * The append requests carrying `entries` in order, split by count and by encoded size (NATS
   * max_payload, 1 MiB by default), each with its payload. Each entry is serialised once: the
   * JSON that sizes it is the JSON sent. An entry that alone exceeds the limit is TOO_LARGE.
   */
  *appendRequests(head: AppendHead, entries: NewEntry[]): Generator<{ chunk: NewEntry[]; req: ShardRequest; payload: Uint8Array }> {
    const budget = this.payloadBudget();
    let chunk: NewEntry[] = [];
    let json: string[] = [];
    let bytes = 0;
    for (const entry of entries) {
      const text = JSON.stringify(entry);
      const size = Buffer.byteLength(text) + 1;
      if (size > budget) throw new TooLargeError(`entry ${entry.appinfo} is larger than a NATS message`);
      if (chunk.length > 0 && (bytes + size > budget || chunk.length >= this.maxEntries)) {
        yield appendRequest(head, chunk, json);
        chunk = [];
        json = [];
        bytes = 0;
      }
      chunk.push(entry);
      json.push(text);
      bytes += size;
    }
    if (chunk.length > 0) yield appendRequest(head, chunk, json);
  }

  /** Bytes of entries one request may carry: NATS max_payload (1 MiB by default) less an envelope. */
  payloadBudget(): number {
    return (this.nc.info?.max_payload ?? 1024 * 1024) - ENVELOPE_BYTES;
  }

  /** At most this many entries go in one request. */
  get maxEntriesPerRequest(): number {
    return this.maxEntries;
  }

  /** Full jitter; cut short when a host announces that it now serves the shard. */
  private async backoff(attempt: number, deadline: number, shard: number): Promise<void> {
    const cap = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** Math.min(attempt, 20));
    const delay = Math.min(Math.random() * cap, Math.max(0, deadline - performance.now()));
    await this.serving.sleep(shard, delay);
  }
}

function appendRequest(head: AppendHead, chunk: NewEntry[], json: string[]): { chunk: NewEntry[]; req: ShardRequest; payload: Uint8Array } {
  return { chunk, req: { ...head, entries: chunk }, payload: encodeWithEntries(head, json) };
}
