/**
 * Read receipts. A reader's `read` entry goes into the reader's own inbox at once; each sender
 * of a read message then gets a `receipt` entry listing every reader so far (merged, so two
 * readers at the same time never lose each other).
 */
import { dedupKeyOf, type DedupKey } from './dedup-key.ts';
import type { Conv, Entry, NewEntry } from './entry.ts';
import { BadRequestError } from './errors.ts';
import { receiptAppinfo } from './server-ids.ts';

/**
 * `from` of receipt entries. A receipt is the server's merge of many reads (readBy is sorted,
 * not chronological), so no single reader authored it; naming one would be arbitrary and would
 * make a retried receipt differ from the first attempt. Clients read `readBy`, not `from`.
 */
export const SYSTEM_SENDER = 'system';

/** Sorted unique union; `grew` is true when `added` held a reader not in `current`. */
export function mergeReaders(current: readonly string[], added: readonly string[]): { readers: string[]; grew: boolean } {
  const before = new Set(current);
  const all = new Set(current);
  for (const r of added) all.add(r);
  return { readers: [...all].sort(), grew: all.size > before.size };
}

export interface ReadTarget {
  /** The sender whose inbox gets a receipt. */
  senderUser: string;
  /** The message read (same appinfo in the sender's copy). */
  appinfo: string;
  /** The conversation as seen from the sender's inbox (1:1: the reader; group: the group). */
  conv: Conv;
}

/**
 * From the entries a reader marked read, the messages whose senders should get a receipt:
 * `msg` entries not sent by the reader, once per message (sender and appinfo: two senders may
 * share an appinfo), in input order.
 */
export function readTargets(entries: readonly Entry[], reader: string): ReadTarget[] {
  const seen = new Set<DedupKey>();
  const out: ReadTarget[] = [];
  for (const e of entries) {
    if (e.kind !== 'msg' || e.from === reader || seen.has(dedupKeyOf(e))) continue;
    seen.add(dedupKeyOf(e));
    const conv: Conv = e.conv.type === 'user' ? { type: 'user', id: reader } : { type: e.conv.type, id: e.conv.id };
    out.push({ senderUser: e.from, appinfo: e.appinfo, conv });
  }
  return out;
}

/** Groups read targets by sender: the receipt work for one sender inbox is serialized. */
export function targetsBySender(targets: readonly ReadTarget[]): Map<string, ReadTarget[]> {
  const out = new Map<string, ReadTarget[]>();
  for (const t of targets) {
    const list = out.get(t.senderUser);
    if (list) list.push(t);
    else out.set(t.senderUser, [t]);
  }
  return out;
}

function assertSeq(seq: number, what: string): void {
  if (!Number.isSafeInteger(seq) || seq <= 0) {
    throw new BadRequestError(`${what} must be a positive integer, got ${seq}`);
  }
}

/** The `read` control entry in the reader's own inbox; referSeq is the highest seq read. */
export function buildReadEntry(reader: string, seqs: number[], now: number, appinfo: string): NewEntry {
  if (seqs.length === 0) throw new BadRequestError('read needs at least one seq');
  for (const s of seqs) assertSeq(s, 'read seq');
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  return {
    kind: 'read',
    appinfo,
    conv: { type: 'user', id: reader },
    from: reader,
    sendTime: now,
    referSeq: sorted[sorted.length - 1],
    seqs: sorted,
  };
}

/**
 * The `receipt` control entry in the sender's inbox: entry `referSeq` is now read by `readers`
 * (all of them so far). `from` is SYSTEM_SENDER (see there).
 */
export function buildReceiptEntry(referSeq: number, readers: string[], target: { conv: Conv }, now: number): NewEntry {
  assertSeq(referSeq, 'receipt referSeq');
  const readBy = [...new Set(readers)].sort();
  if (readBy.length === 0) throw new BadRequestError('a receipt needs at least one reader');
  return {
    kind: 'receipt',
    appinfo: receiptAppinfo(referSeq, readBy.length),
    conv: { type: target.conv.type, id: target.conv.id },
    from: SYSTEM_SENDER,
    sendTime: now,
    referSeq,
    readBy,
  };
}
