/**
 * Background job kinds and their queues. Jobs are idempotent (appinfo dedup per inbox and per
 * group stream; receipts are set unions; pushes carry prevSeq), so a redelivery after a crash
 * is harmless — that is what lets the queue promise at-least-once.
 */
import type { AfterSendPayload, Entry, Json, NewEntry, NotifyPayload, Tier } from '@seqline/core';
import { isNotifyItem } from '@seqline/core';

/** Write-fanout, one queue (and worker pool) per tier: a huge group's backlog never delays 1:1. */
export const FANOUT_QUEUES: Readonly<Record<Tier, string>> = Object.freeze({
  small: 'fanout.small',
  large: 'fanout.large',
  huge: 'fanout.huge',
});
/** Pushes of read-fanout (huge) group messages to connected members. */
export const NOTIFY_QUEUE = 'notify.huge';
export const RECEIPT_QUEUE = 'receipts';
/** v1.1: after-send hook calls, one job per stored message (after-send.ts). */
export const AFTER_SEND_QUEUE = 'hooks.after-send';
/** v1.1: offline notifications, one job per user per coalescing window (offline-notifier.ts). */
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
export type OfflineNotifyJob = Omit<NotifyPayload, 'type' | 'badge'>;

/** The after-send payload without its `type`: the settings (URL, secret) are read when it runs. */
export type AfterSendJob = Omit<AfterSendPayload, 'type'>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Payloads come back from a queue as JSON; check the shape once before use. */
export function parseFanoutJob(payload: Json): FanoutJob {
  if (!isObject(payload) || typeof payload.tenant !== 'string' || !Array.isArray(payload.recipients) || !isObject(payload.entry)) {
    throw new Error('malformed fanout job');
  }
  return payload as unknown as FanoutJob;
}

export function parseNotifyJob(payload: Json): NotifyJob {
  if (
    !isObject(payload) ||
    typeof payload.tenant !== 'string' ||
    typeof payload.groupKey !== 'string' ||
    typeof payload.group !== 'string' ||
    !isObject(payload.entry) ||
    typeof payload.entry.seq !== 'number' ||
    typeof payload.prevGseq !== 'number'
  ) {
    throw new Error('malformed notify job');
  }
  return payload as unknown as NotifyJob;
}

export function parseReceiptJob(payload: Json): ReceiptJob {
  if (
    !isObject(payload) ||
    typeof payload.tenant !== 'string' ||
    typeof payload.sender !== 'string' ||
    typeof payload.appinfo !== 'string' ||
    !Array.isArray(payload.readers)
  ) {
    throw new Error('malformed receipt job');
  }
  return payload as unknown as ReceiptJob;
}

export function parseAfterSendJob(payload: Json): AfterSendJob {
  if (
    !isObject(payload) ||
    typeof payload.tenant !== 'string' ||
    typeof payload.from !== 'string' ||
    !isObject(payload.to) ||
    typeof payload.appinfo !== 'string' ||
    typeof payload.seq !== 'number' ||
    typeof payload.sendTime !== 'number' ||
    typeof payload.msgType !== 'string'
  ) {
    throw new Error('malformed after-send job');
  }
  return payload as unknown as AfterSendJob;
}

export function parseOfflineNotifyJob(payload: Json): OfflineNotifyJob {
  if (
    !isObject(payload) ||
    typeof payload.tenant !== 'string' ||
    typeof payload.user !== 'string' ||
    !Array.isArray(payload.entries) ||
    payload.entries.length === 0 ||
    !payload.entries.every(isNotifyItem)
  ) {
    throw new Error('malformed offline notify job');
  }
  return payload as unknown as OfflineNotifyJob;
}

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
