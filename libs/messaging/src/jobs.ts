/**
 * Background work: fanout of an entry into recipient inboxes, and receipt updates in the
 * sender's inbox. Jobs are idempotent (appinfo dedup per inbox; receipts are set unions), so a
 * redelivery after a crash is harmless — that is what lets the queue promise at-least-once.
 */
import {
  convForRecipient, inboxKey, type InboxWriter, type Json, type JobContext, type Logger,
  type NewEntry, type WorkQueue,
} from '@seqline/core';
import pLimit from 'p-limit';

export const FANOUT_QUEUE = 'fanout';
export const RECEIPT_QUEUE = 'receipts';

export interface FanoutJob {
  tenant: string;
  /** Group key for per-group concurrency; absent for 1:1. */
  groupKey?: string;
  entry: NewEntry;
  recipients: string[];
}

export interface ReceiptJob {
  tenant: string;
  sender: string;
  appinfo: string;
  readers: string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Payloads come back from a queue as JSON; check the shape once before use. */
export function parseFanoutJob(payload: Json): FanoutJob {
  if (!isObject(payload) || typeof payload.tenant !== 'string' || !Array.isArray(payload.recipients)
    || !isObject(payload.entry)) {
    throw new Error('malformed fanout job');
  }
  return payload as unknown as FanoutJob;
}

export function parseReceiptJob(payload: Json): ReceiptJob {
  if (!isObject(payload) || typeof payload.tenant !== 'string' || typeof payload.sender !== 'string'
    || typeof payload.appinfo !== 'string' || !Array.isArray(payload.readers)) {
    throw new Error('malformed receipt job');
  }
  return payload as unknown as ReceiptJob;
}

export interface WorkerOptions {
  queue: WorkQueue;
  writer: InboxWriter;
  logger: Logger;
  /** Pool size for fanout jobs. */
  fanoutConcurrency: number;
  /** Inbox appends in flight within one fanout job. */
  appendConcurrency: number;
  /** Fanout jobs of one group in flight at once; read on every job so it can change live. */
  perGroupConcurrency: () => number;
}

/** Writes one copy of the entry into every recipient's inbox. */
export async function runFanout(job: FanoutJob, writer: InboxWriter, appendConcurrency: number): Promise<void> {
  const limit = pLimit(appendConcurrency);
  await Promise.all(job.recipients.map((user) => limit(async () => {
    const entry: NewEntry = job.entry.conv.type === 'user'
      ? { ...job.entry, conv: convForRecipient(job.entry.conv, job.entry.from) }
      : job.entry;
    await writer.append(inboxKey(job.tenant, user), [entry]);
  })));
}

export async function startWorkers(o: WorkerOptions): Promise<void> {
  await o.queue.consume(FANOUT_QUEUE, async (payload: Json, ctx: JobContext) => {
    const job = parseFanoutJob(payload);
    if (ctx.attempt > 1) o.logger.info({ job: ctx.id, attempt: ctx.attempt }, 'fanout retry');
    await runFanout(job, o.writer, o.appendConcurrency);
  }, {
    concurrency: o.fanoutConcurrency,
    keyOf: (p) => (isObject(p) && typeof p.groupKey === 'string' ? p.groupKey : undefined),
    perKeyConcurrency: o.perGroupConcurrency,
  });
  await o.queue.consume(RECEIPT_QUEUE, async (payload: Json) => {
    const job = parseReceiptJob(payload);
    await o.writer.addReceipt(inboxKey(job.tenant, job.sender), job.appinfo, job.readers);
  }, {
    concurrency: o.fanoutConcurrency,
    // One sender's receipts are serialized by its inbox owner as well; keying here keeps a
    // burst of reads for one sender from occupying the whole pool.
    keyOf: (p) => (isObject(p) && typeof p.tenant === 'string' && typeof p.sender === 'string'
      ? `${p.tenant}:${p.sender}` : undefined),
    perKeyConcurrency: 2,
  });
}

/** Job payloads are plain data by construction (entries are JSON); this is the one cast. */
export function toJson(value: FanoutJob | ReceiptJob): Json {
  return value as unknown as Json;
}
