/**
 * InboxWriter for processes that own no shard (gateways, fanout workers): every call goes to
 * the shard's owner over NATS request/reply. Retrying is safe because appends and receipts are
 * idempotent by appinfo (a retry of an append that did land returns the original seq), so
 * no-responders, timeouts and retryable owner errors (handover, fencing, overload) are retried
 * with backoff until a deadline; then the caller gets OverloadedError.
 */
import { performance } from 'node:perf_hooks';
import { InternalError, OverloadedError, TooLargeError, shardOf, silentLogger } from '@seqline/core';
import type { AppendOutcome, InboxKey, InboxWriter, Logger, NewEntry } from '@seqline/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { fromWireError } from './errors.ts';
import { DEFAULT_SUBJECT_PREFIX, decodeReply, encodeJson, shardSubject } from './wire.ts';
import type { InboxReply, InboxRequest } from './wire.ts';

export interface RemoteInboxWriterOptions {
  nc: NatsConnection;
  /** Must equal the owners' shardCount. Default 64. */
  shardCount?: number;
  /** Default `inbox.append`. */
  subjectPrefix?: string;
  /** One request's timeout. Default 3 s. */
  requestTimeoutMs?: number;
  /**
   * Total time a call keeps retrying. Default 20 s: a shard handover at the default lease ttl
   * (10 s) costs up to ttl/3 (noticing) + ttl + margin (wait-out) ≈ 14.4 s.
   */
  deadlineMs?: number;
  /** First retry delay, doubled per attempt up to `maxBackoffMs` (full jitter). Default 50 ms. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Most entries per request. Default 512 (the owner's merge limit). */
  maxEntriesPerRequest?: number;
  logger?: Logger;
}

/** Leaves room under NATS max_payload for the request envelope. */
const ENVELOPE_BYTES = 1024;

export class RemoteInboxWriter implements InboxWriter {
  private readonly nc: NatsConnection;
  private readonly shardCount: number;
  private readonly subjectPrefix: string;
  private readonly requestTimeoutMs: number;
  private readonly deadlineMs: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxEntries: number;
  private readonly logger: Logger;
  private closed = false;

  constructor(options: RemoteInboxWriterOptions) {
    this.nc = options.nc;
    this.shardCount = options.shardCount ?? 64;
    this.subjectPrefix = options.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 3000;
    this.deadlineMs = options.deadlineMs ?? 20_000;
    this.initialBackoffMs = options.initialBackoffMs ?? 50;
    this.maxBackoffMs = options.maxBackoffMs ?? 1000;
    this.maxEntries = options.maxEntriesPerRequest ?? 512;
    this.logger = (options.logger ?? silentLogger).child({ component: 'remote-inbox-writer' });
  }

  /**
   * Entries go in order, in as many requests as NATS' payload limit needs. If a later request
   * fails the earlier ones stay written; the caller's retry of the whole call dedups them.
   */
  async append(inbox: InboxKey, entries: NewEntry[]): Promise<AppendOutcome[]> {
    if (entries.length === 0) return [];
    const outcomes: AppendOutcome[] = [];
    for (const chunk of this.chunks(entries)) {
      const reply = await this.call({ op: 'append', inbox, entries: chunk });
      if (reply.outcomes?.length !== chunk.length) throw new InternalError('inbox owner returned the wrong number of outcomes');
      outcomes.push(...reply.outcomes);
    }
    return outcomes;
  }

  async addReceipt(inbox: InboxKey, appinfo: string, readers: string[]): Promise<void> {
    if (readers.length === 0) return;
    await this.call({ op: 'receipt', inbox, appinfo, readers });
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    const reply = await this.call({ op: 'head', inbox });
    if (reply.head === undefined) throw new InternalError('inbox owner reply without head');
    return reply.head;
  }

  /** The NATS connection belongs to the caller and stays open. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private async call(req: InboxRequest): Promise<InboxReply & { ok: true }> {
    if (this.closed) throw new OverloadedError('inbox writer is closed');
    const shard = shardOf(req.inbox, this.shardCount);
    const subject = shardSubject(this.subjectPrefix, shard);
    const payload = encodeJson(req);
    const deadline = performance.now() + this.deadlineMs;
    let lastError = 'no attempt';
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) break;
      let reply: InboxReply;
      try {
        const msg = await this.nc.request(subject, payload, { timeout: Math.max(1, Math.min(this.requestTimeoutMs, remaining)) });
        reply = decodeReply(msg.data);
      } catch (err) {
        if (this.nc.isClosed()) throw new OverloadedError('inbox owner unavailable: NATS connection closed');
        // No responders (no owner yet), timeout (owner paused or gone), malformed reply.
        lastError = err instanceof Error ? err.message : String(err);
        await this.backoff(attempt, deadline);
        continue;
      }
      if (reply.ok) return reply;
      if (!reply.error.retryable) throw fromWireError(reply.error);
      lastError = `${reply.error.code}: ${reply.error.message}`;
      await this.backoff(attempt, deadline);
    }
    this.logger.warn({ shard, op: req.op, inbox: req.inbox, lastError }, 'inbox owner unavailable');
    throw new OverloadedError(`inbox owner unavailable (shard ${shard}: ${lastError})`);
  }

  private async backoff(attempt: number, deadline: number): Promise<void> {
    const cap = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** Math.min(attempt, 20));
    const delay = Math.min(Math.random() * cap, Math.max(0, deadline - performance.now()));
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  }

  /** Splits by count and by encoded size (NATS max_payload, 1 MiB by default). */
  private *chunks(entries: NewEntry[]): Generator<NewEntry[]> {
    const budget = (this.nc.info?.max_payload ?? 1024 * 1024) - ENVELOPE_BYTES;
    let chunk: NewEntry[] = [];
    let bytes = 0;
    for (const entry of entries) {
      const size = Buffer.byteLength(JSON.stringify(entry)) + 1;
      if (size > budget) throw new TooLargeError(`entry ${entry.appinfo} is larger than a NATS message`);
      if (chunk.length > 0 && (bytes + size > budget || chunk.length >= this.maxEntries)) {
        yield chunk;
        chunk = [];
        bytes = 0;
      }
      chunk.push(entry);
      bytes += size;
    }
    if (chunk.length > 0) yield chunk;
  }
}
