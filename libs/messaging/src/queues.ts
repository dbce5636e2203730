/**
 * Background job kinds and their queues. Jobs are idempotent (appinfo dedup per inbox and per
 * group stream; receipts are set unions; pushes carry prevSeq), so a redelivery after a crash
 * is harmless — that is what lets the queue promise at-least-once.
 */
import { z } from 'zod';
import { ENTRY_KINDS, type AfterSendPayload, type Entry, type Json, type NewEntry, type NotifyPayload, type Tier } from '@seqline/core';

/** Write-fanout, one queue (and worker pool) per tier: a huge group's backlog never delays 1:1. */
export const FANOUT_QUEUES: Readonly<Record<Tier, string>> = Object.freeze({
  small: 'fanout.small',
  large: 'fanout.large',
  huge: 'fanout.huge',
});
/** Pushes of read-fanout (huge) group messages to connected members. */
export const NOTIFY_QUEUE = 'notify.huge';
export const RECEIPT_QUEUE = 'receipts';
/** After-send hook calls, one job per stored message (after-send.ts). */
export const AFTER_SEND_QUEUE = 'hooks.after-send';
/** Offline notifications, one job per user per coalescing window (offline-notifier.ts). */
export const OFFLINE_NOTIFY_QUEUE = 'hooks.notify';

/** 1:1 work rides with small groups: both are the highest priority class. */
export function fanoutQueueFor(tier: Tier | undefined): string {
  return FANOUT_QUEUES[tier ?? 'small'];
}

export interface FanoutJob {
  tenant: string;
  /** Group key for per-group concurrency and merging; absent for 1:1. */
  groupKey?: string;
  entry: NewEntry;
  /** Snapshot taken when the send was accepted (tenant-local user ids). */
  recipients: string[];
}

/** A message (or recall) now in a group stream, to be pushed to the members connected. */
export interface NotifyJob {
  tenant: string;
  groupKey: string;
  /** Tenant-local group id (what the `group.push` frame names). */
  group: string;
  /** The stored stream entry; `seq` is its gseq. */
  entry: Entry;
  /** The gseq stored just before it. */
  prevGseq: number;
}

export interface ReceiptJob {
  tenant: string;
  sender: string;
  appinfo: string;
  readers: string[];
}

/** One window's notification, without the badge (counted when it runs) and its `type`. */
export type OfflineNotifyJob = Omit<NotifyPayload, 'type' | 'badge' | 'badgeCapped'>;

/** The after-send payload without its `type`: the settings (URL, secret) are read when it runs. */
export type AfterSendJob = Omit<AfterSendPayload, 'type'>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Job payloads as zod schemas, one per job kind, checked once where a job comes off its queue.
 * A job is checked, never rewritten: the payload itself is handed on, not zod's copy (which
 * drops a `__proto__` key of a message body: the body would no longer be what was sent), and
 * objects are loose, so a field this version does not know (a newer producer's, during a
 * rolling upgrade) reaches the stores and hooks as it came.
 */
const conv = z.looseObject({ type: z.enum(['user', 'group']), id: z.string() });
const json: z.ZodType<Json> = z.json();

/** An entry before its seq: the fields every entry has are required, the others typed when present. */
const newEntry = z.looseObject({
  kind: z.enum(ENTRY_KINDS),
  appinfo: z.string(),
  conv,
  from: z.string(),
  sendTime: z.number(),
  type: z.string().optional(),
  body: json.optional(),
  referSeq: z.number().optional(),
  seqs: z.array(z.number()).optional(),
  readBy: z.array(z.string()).optional(),
  recall: z.looseObject({ appinfo: z.string(), sendTime: z.number(), from: z.string().optional() }).optional(),
  mentions: z.array(z.string()).optional(),
  edit: z.looseObject({ appinfo: z.string(), sendTime: z.number(), type: z.string(), body: json, editedAt: z.number() }).optional(),
  upToSeq: z.number().optional(),
});

/** The same rule as core's isNotifyItem: a positive safe-integer seq, a user or group conv. */
const notifyItem = z.looseObject({
  seq: z.int().positive(),
  conv,
  from: z.string(),
  appinfo: z.string(),
  mention: z.boolean(),
  preview: z.string().optional(),
});

/** The schema of each job kind, and the name its malformed jobs are dead-lettered under. */
export const JOB_SCHEMAS = {
  fanout: z.looseObject({
    tenant: z.string(),
    groupKey: z.string().optional(),
    entry: newEntry,
    recipients: z.array(z.string()),
  }) satisfies z.ZodType<FanoutJob>,
  notify: z.looseObject({
    tenant: z.string(),
    groupKey: z.string(),
    group: z.string(),
    entry: newEntry.extend({ seq: z.number() }),
    prevGseq: z.number(),
  }) satisfies z.ZodType<NotifyJob>,
  receipt: z.looseObject({
    tenant: z.string(),
    sender: z.string(),
    appinfo: z.string(),
    readers: z.array(z.string()),
  }) satisfies z.ZodType<ReceiptJob>,
  'after-send': z.looseObject({
    tenant: z.string(),
    from: z.string(),
    to: z.union([z.looseObject({ user: z.string() }), z.looseObject({ group: z.string() })]),
    appinfo: z.string(),
    seq: z.number(),
    sendTime: z.number(),
    msgType: z.string(),
    // Every producer writes it (null for a message without one).
    body: json,
  }) satisfies z.ZodType<AfterSendJob>,
  'offline notify': z.looseObject({
    tenant: z.string(),
    user: z.string(),
    entries: z.array(notifyItem).min(1),
  }) satisfies z.ZodType<OfflineNotifyJob>,
};

export type JobKind = keyof typeof JOB_SCHEMAS;

/** A job whose payload does not match its kind's schema: dead-lettered under this message. */
export class MalformedJobError extends Error {
  constructor(kind: JobKind, options?: { cause?: unknown }) {
    super(`malformed ${kind} job`, options);
    this.name = 'MalformedJobError';
  }
}

/**
 * The one check of a payload read back from a queue (JSON) against its job kind. Returns the
 * payload itself: the schema's output type (checked against each job type above) is what it holds.
 */
export function parseJob<K extends JobKind>(kind: K, payload: Json): z.output<(typeof JOB_SCHEMAS)[K]> {
  const checked = JOB_SCHEMAS[kind].safeParse(payload);
  if (!checked.success) throw new MalformedJobError(kind, { cause: checked.error });
  return payload as z.output<(typeof JOB_SCHEMAS)[K]>;
}

export const parseFanoutJob = (payload: Json): FanoutJob => parseJob('fanout', payload);
export const parseNotifyJob = (payload: Json): NotifyJob => parseJob('notify', payload);
export const parseReceiptJob = (payload: Json): ReceiptJob => parseJob('receipt', payload);
export const parseAfterSendJob = (payload: Json): AfterSendJob => parseJob('after-send', payload);
export const parseOfflineNotifyJob = (payload: Json): OfflineNotifyJob => parseJob('offline notify', payload);

/** The per-group key a job is bounded and merged by (undefined: 1:1, no bound). */
export function groupKeyOfPayload(p: Json): string | undefined {
  return isObject(p) && typeof p.groupKey === 'string' ? p.groupKey : undefined;
}

export function tenantOfPayload(p: Json): string | undefined {
  return isObject(p) && typeof p.tenant === 'string' ? p.tenant : undefined;
}

export function senderKeyOfPayload(p: Json): string | undefined {
  return isObject(p) && typeof p.tenant === 'string' && typeof p.sender === 'string' ? `${p.tenant}:${p.sender}` : undefined;
}

/** Job payloads are plain data by construction (entries are JSON); this is the one cast. */
export function toJson(value: FanoutJob | NotifyJob | ReceiptJob | AfterSendJob | OfflineNotifyJob): Json {
  return value as unknown as Json;
}
