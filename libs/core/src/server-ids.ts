/**
 * Every id the server makes: the job ids of the durable queues and the appinfos of its own
 * entries. Nowhere else builds one, so one rule holds for all: an id names its whole scope.
 *
 * - A job id names its kind (each kind runs on one queue family), the tenant, the inbox or
 *   group it acts for, and the operation there. Every queue shares one dedup namespace (one
 *   jobs table embedded; one JetStream stream deduplicated by `Nats-Msg-Id` distributed), and a
 *   client appinfo is unique only within its sender's inbox, so an id without the sender would
 *   let two users' messages share one job: the second is dropped as a duplicate.
 * - A server appinfo contains ':' (a client appinfo cannot: appinfo.ts), so the two never meet,
 *   and names the inbox it speaks for wherever it lands in inboxes other than that one.
 *
 * Encoding: parts joined by ':'. Every part is ':'-free (tenant, user and group ids, numbers,
 * fixed words) except at most one free part (a client or server appinfo, a made id), and each
 * kind has a fixed number of parts, so an id reads back one way only: the fixed parts are split
 * off from both ends and the free part is what remains. The property test (server-ids.test.ts)
 * checks that distinct operations never share an id and that every id fits its store.
 */
import { InternalError } from './errors.ts';

/**
 * Longest job id in UTF-8 bytes, in every job store. The longest id made here is a receipt's,
 * about 590 bytes (three ids of 64 characters and a 128-character appinfo of 3-byte
 * characters); an LMDB key (about 2 KB) holds a 1 KiB id beside its queue name and time.
 */
export const MAX_JOB_ID_BYTES = 1024;

/** The kinds of durable jobs; the first part of every job id. */
export const JOB_KINDS = [
  'fanout',
  'mention',
  'after-send',
  'recall',
  'recall-copies',
  'edit',
  'edit-copies',
  'group',
  'receipt',
  'group-notify',
  'offline-notify',
] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** A message, named by its sender's inbox and its (client) appinfo: unique in a deployment. */
export interface MessageRef {
  tenant: string;
  sender: string;
  appinfo: string;
}

/** A server entry made by `author` (its inbox), named by that entry's server appinfo. */
export interface AuthoredEntryRef {
  tenant: string;
  author: string;
  appinfo: string;
}

/** A ':'-free, non-empty part (an id, a number, a word): a bug otherwise, never client input. */
function fixed(part: string | number): string {
  const text = String(part);
  if (text.length === 0 || text.includes(':')) throw new InternalError(`server id part ${JSON.stringify(text)} is empty or holds ':'`);
  return text;
}

function seqPart(seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new InternalError(`server id seq ${String(seq)} is not a non-negative integer`);
  return String(seq);
}

function id(head: readonly (string | number)[], free?: string, tail: readonly (string | number)[] = []): string {
  const parts = head.map(fixed);
  if (free !== undefined) parts.push(free);
  for (const p of tail) parts.push(fixed(p));
  return parts.join(':');
}

// ---------------------------------------------------------------------------- job ids

/** Write-fanout of a message to its recipients' inboxes (1:1 fallback and groups). */
export function fanoutJobId(m: MessageRef): string {
  return id(['fanout', m.tenant, m.sender], m.appinfo);
}

/** The copies of a read-fanout message in the inboxes of the members it names. */
export function mentionJobId(m: MessageRef): string {
  return id(['mention', m.tenant, m.sender], m.appinfo);
}

/** The after-send hook call of a stored message. */
export function afterSendJobId(m: MessageRef): string {
  return id(['after-send', m.tenant, m.sender], m.appinfo);
}

/**
 * A message's recall into the inboxes holding a copy. Named by the message, not by who
 * recalls (its sender or a group admin): its entry's appinfo is the message's too.
 */
export function recallJobId(m: MessageRef): string {
  return id(['recall', m.tenant, m.sender], m.appinfo);
}

/** A read-fanout message's recall into the inboxes of its sender and the members it names. */
export function recallCopiesJobId(m: MessageRef): string {
  return id(['recall-copies', m.tenant, m.sender], m.appinfo);
}

/** An `edit` entry (appinfo editAppinfo) into the inboxes holding a copy of the message. */
export function editJobId(e: AuthoredEntryRef): string {
  return id(['edit', e.tenant, e.author], e.appinfo);
}

/** A read-fanout message's `edit` entry into the inboxes of the members it names. */
export function editCopiesJobId(e: AuthoredEntryRef): string {
  return id(['edit-copies', e.tenant, e.author], e.appinfo);
}

/** A `group` event entry (appinfo from group*Appinfo) into the members' inboxes. */
export function groupEventJobId(e: { tenant: string; group: string; appinfo: string }): string {
  return id(['group', e.tenant, e.group], e.appinfo);
}

/**
 * The receipt for `reader` having read `sender`'s message `appinfo`. The appinfo sits between
 * the ids (the shape the previous version used, so a job it left pending and the same receipt
 * enqueued now share an id); the reader is the last part, which has no ':'.
 */
export function receiptJobId(r: { tenant: string; sender: string; appinfo: string; reader: string }): string {
  return id(['receipt', r.tenant, r.sender], r.appinfo, [r.reader]);
}

/** The push of group stream entry `gseq` to the members connected: a gseq names one entry. */
export function groupNotifyJobId(n: { tenant: string; group: string; gseq: number }): string {
  return id(['group-notify', n.tenant, n.group, seqPart(n.gseq)]);
}

/**
 * One offline-notification window of `user`, named by the lowest and the highest inbox seq it
 * carries. Not by its first alone: an entry told again (a resend finding an earlier owner's
 * original) opens a window starting at an old seq, which then shared its id with the window that
 * first carried it, and the queue's dedup dropped it with the new entries beside it.
 */
export function offlineNotifyJobId(n: { tenant: string; user: string; firstSeq: number; lastSeq: number }): string {
  return id(['offline-notify', n.tenant, n.user, seqPart(n.firstSeq), seqPart(n.lastSeq)]);
}

// ---------------------------------------------------------------------------- server appinfos

/**
 * The `recall` entry of `sender`'s message `appinfo`, in every inbox and group stream it goes
 * to. Those hold several senders' messages, and two senders may use one appinfo: the sender is
 * named. The same for whoever recalls (sender or admin), so a second recall is a duplicate.
 */
export function recallAppinfo(m: { sender: string; appinfo: string }): string {
  return id(['recall', m.sender], m.appinfo);
}

/**
 * Where to look for the recall marker of a message in its sender's inbox: this version's, and
 * the previous version's `recall:<appinfo>` (it named no sender), so a message recalled before
 * an upgrade stays recalled. Found there, the old one is taken as the sender's, as it was.
 */
export function recallAppinfoLookups(m: { sender: string; appinfo: string }): [string, string] {
  return [recallAppinfo(m), id(['recall'], m.appinfo)];
}

/**
 * The `tick` marker stored beside the sender's own copy of a read-fanout message. It lives in
 * the sender's inbox only, where the message's appinfo is already the sender's own, and a
 * resend looks it up (markers the previous version stored too): its shape stays.
 */
export function streamMarkerAppinfo(messageAppinfo: string): string {
  return id(['tick'], messageAppinfo);
}

/**
 * The receipt entry for entry `referSeq` of the sender's inbox once `readerCount` users read
 * it. It lives in that inbox only, where a seq names one entry forever (I1); a retried receipt
 * dedups by it, and since readBy only grows each count appears at most once.
 */
export function receiptAppinfo(referSeq: number, readerCount: number): string {
  return id(['receipt', seqPart(referSeq), seqPart(readerCount)]);
}

/** A `read` entry of `reader` (in their own inbox); `made` is a fresh id (UUIDv7). */
export function readAppinfo(r: { reader: string; made: string }): string {
  return id(['read', r.reader], r.made);
}

/** A `clear` entry of `owner` (in their own inbox). */
export function clearAppinfo(c: { owner: string; made: string }): string {
  return id(['clear', c.owner], c.made);
}

/** A `delete` entry of `owner` (in their own inbox). */
export function deleteAppinfo(c: { owner: string; made: string }): string {
  return id(['delete', c.owner], c.made);
}

/**
 * An `edit` entry by `editor`: one appinfo in every inbox (and stream) it goes to. `made` is the
 * client's editId (a client appinfo: its retries dedup) or a fresh id.
 */
export function editAppinfo(e: { editor: string; made: string }): string {
  return id(['edit', e.editor], e.made);
}

/** The `group.create` event of `group`: a group is created once, so one per group. */
export function groupCreateAppinfo(group: string): string {
  return id(['group', group, 'create']);
}

/** A `group.add` / `group.remove` / `group.tier` event of `group`. */
export function groupEventAppinfo(e: { group: string; event: 'add' | 'remove' | 'tier'; made: string }): string {
  return id(['group', e.group, e.event], e.made);
}

/**
 * The `group.rename` event that gave `group` its name revision `nameRev`: one per revision, so a
 * retried rename delivers its notice again under the same appinfo and no inbox holds it twice.
 */
export function groupRenameAppinfo(e: { group: string; nameRev: number }): string {
  return id(['group', e.group, 'rename', e.nameRev]);
}
