/**
 * The `inbox.append.<shard>` request/reply contract (JSON over core NATS). The shard's owner
 * writes both its inboxes and its group streams, so one subject carries both kinds of ops.
 * Both sides validate: the owner never trusts a request, the caller never trusts a reply.
 */
import { BadRequestError, ENTRY_KINDS } from '@seqline/core';
import type {
  AppendOutcome,
  ConversationRebuildReport,
  EntryKind,
  FollowUpAppend,
  FollowUpResult,
  GroupKey,
  InboxKey,
  NewEntry,
} from '@seqline/core';
import type { WireError } from './errors.ts';

/**
 * `then` (optional): once every entry was new, the owner appends `then.entries` to `then.inbox`
 * itself — in place when it serves that shard too, else through the shard's owner — and says in
 * the reply's `then` how that went (InboxWriter.appendThen). A reply to such a request
 * always carries `then`; the caller refuses one without it.
 */
export type InboxRequest =
  | { op: 'append'; inbox: InboxKey; entries: NewEntry[]; then?: FollowUpAppend }
  | { op: 'receipt'; inbox: InboxKey; appinfo: string; readers: string[] }
  | { op: 'head'; inbox: InboxKey }
  /** Rebuild the inbox's conversation index in its queue (InboxWriter.rebuildConversations); the reply carries `rebuild`. */
  | { op: 'rebuild'; inbox: InboxKey };

/** Group stream ops, routed by `shardOf(group)` like inboxes. */
export type GroupRequest = { op: 'gappend'; group: GroupKey; entries: NewEntry[] } | { op: 'ghead'; group: GroupKey };

export type ShardRequest = InboxRequest | GroupRequest;

/**
 * A readiness probe (ShardReadiness): answered `{ok: true}` only by an owner that serves the
 * shard now and passes the same checks as a write (rule b first). Not a ShardRequest: it writes
 * nothing and is routed by shard number, not by key.
 */
export interface ReadyRequest {
  op: 'ready';
  shard: number;
}

/** An append request without its entries. */
export type AppendHead = { op: 'append'; inbox: InboxKey } | { op: 'gappend'; group: GroupKey };

/**
 * An append outcome on the wire; `prevSeq` only in `gappend` replies, for entries stored by the
 * call; `original` on a duplicate (an owner of the previous version leaves it out).
 */
export type WireOutcome = AppendOutcome & { prevSeq?: number };

export type InboxReply =
  | { ok: true; outcomes?: WireOutcome[]; head?: number; then?: FollowUpResult; rebuild?: ConversationRebuildReport }
  | { ok: false; error: WireError };

export const DEFAULT_SUBJECT_PREFIX = 'inbox.append';
/** All owners of a shard subscribe in one queue group, so a request reaches one of them. */
export const OWNER_QUEUE_GROUP = 'seqline-inbox-owners';

export function shardSubject(prefix: string, shard: number): string {
  return `${prefix}.${shard}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The key a request is routed by (its shard is `shardOf(key)`). */
export function routingKey(req: ShardRequest): string {
  return 'group' in req ? req.group : req.inbox;
}

export function encodeJson(value: ShardRequest | ReadyRequest | InboxReply): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/**
 * `head` with an `entries` array whose items are already JSON (`entriesJson`), encoded as
 * encodeJson({ ...head, entries }) would be: the requester sizes each entry by its JSON and
 * reuses that JSON instead of serialising it twice.
 */
export function encodeWithEntries(head: AppendHead, entriesJson: string[]): Uint8Array {
  return encoder.encode(`${JSON.stringify(head).slice(0, -1)},"entries":[${entriesJson.join(',')}]}`);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isInboxKey = (v: unknown): v is string => isStr(v) && v.includes(':');

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data));
  } catch {
    throw new BadRequestError('request is not JSON');
  }
}

/** Owner side: a typed request or BadRequestError. */
export function decodeRequest(data: Uint8Array): ShardRequest {
  const req = decodeOwnerRequest(data);
  if (req.op === 'ready') throw new BadRequestError('unknown op ready');
  return req;
}

/** Owner side, as the owner reads its subject: a shard request or a readiness probe. */
export function decodeOwnerRequest(data: Uint8Array): ShardRequest | ReadyRequest {
  const raw = parseJson(data);
  if (!isObj(raw)) throw new BadRequestError('request is not an object');
  if (raw.op === 'ready') {
    const { shard } = raw;
    if (typeof shard !== 'number' || !Number.isSafeInteger(shard) || shard < 0 || Object.keys(raw).length !== 2) {
      throw new BadRequestError('ready takes only a shard number');
    }
    return { op: 'ready', shard };
  }
  if (raw.op === 'gappend' || raw.op === 'ghead') return decodeGroupRequest(raw);
  if (!isInboxKey(raw.inbox)) throw new BadRequestError('request needs an inbox key');
  const inbox = raw.inbox as InboxKey;
  switch (raw.op) {
    case 'append': {
      const entries = checkEntries(raw.entries);
      return raw.then === undefined ? { op: 'append', inbox, entries } : { op: 'append', inbox, entries, then: checkFollowUp(raw.then) };
    }
    case 'receipt': {
      if (!isStr(raw.appinfo)) throw new BadRequestError('receipt needs an appinfo');
      if (!Array.isArray(raw.readers) || !raw.readers.every(isStr)) throw new BadRequestError('receipt needs readers');
      return { op: 'receipt', inbox, appinfo: raw.appinfo, readers: raw.readers };
    }
    case 'head':
      return { op: 'head', inbox };
    case 'rebuild':
      // It rewrites a whole index: nothing but the inbox may ride along, not even by mistake.
      if (Object.keys(raw).some((k) => k !== 'op' && k !== 'inbox')) throw new BadRequestError('rebuild takes only an inbox');
      return { op: 'rebuild', inbox };
    default:
      throw new BadRequestError(`unknown op ${String(raw.op)}`);
  }
}

function decodeGroupRequest(raw: Obj): GroupRequest {
  if (!isStr(raw.group) || !raw.group.includes(':')) throw new BadRequestError('request needs a group key');
  const group = raw.group as GroupKey;
  return raw.op === 'gappend' ? { op: 'gappend', group, entries: checkEntries(raw.entries) } : { op: 'ghead', group };
}

/** The longest follow-up wait an owner accepts: it holds the request's reply that long. */
export const MAX_FOLLOW_UP_MS = 10_000;

function checkFollowUp(value: unknown): FollowUpAppend {
  if (!isObj(value) || !isInboxKey(value.inbox)) throw new BadRequestError('then needs an inbox key');
  const { timeoutMs } = value;
  if (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_FOLLOW_UP_MS) {
    throw new BadRequestError(`then.timeoutMs must be an integer in [1, ${MAX_FOLLOW_UP_MS}]`);
  }
  return { inbox: value.inbox as InboxKey, entries: checkEntries(value.entries), timeoutMs };
}

function checkEntries(value: unknown): NewEntry[] {
  if (!Array.isArray(value)) throw new BadRequestError('append needs entries');
  return value.map(checkEntry);
}

/** Structural check only: content rules (body size, kinds allowed from a client) are the gateway's. */
function checkEntry(value: unknown): NewEntry {
  if (!isObj(value)) throw new BadRequestError('entry is not an object');
  if (!isStr(value.appinfo)) throw new BadRequestError('entry without appinfo');
  if (!ENTRY_KINDS.includes(value.kind as EntryKind)) throw new BadRequestError(`bad entry kind ${String(value.kind)}`);
  if (!isObj(value.conv) || !isStr(value.conv.id) || (value.conv.type !== 'user' && value.conv.type !== 'group')) {
    throw new BadRequestError('entry without conv');
  }
  if (typeof value.from !== 'string') throw new BadRequestError('entry without from');
  if (typeof value.sendTime !== 'number' || !Number.isFinite(value.sendTime)) throw new BadRequestError('entry without sendTime');
  if ('seq' in value) throw new BadRequestError('a new entry has no seq');
  return value as unknown as NewEntry;
}

/** Caller side: a typed reply, or an Error when the owner answered something malformed. */
export function decodeReply(data: Uint8Array): InboxReply {
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(data));
  } catch {
    throw new Error('inbox owner reply is not JSON');
  }
  if (!isObj(raw)) throw new Error('inbox owner reply is not an object');
  if (raw.ok === true) {
    const reply: InboxReply = { ok: true };
    if (raw.outcomes !== undefined) {
      if (!Array.isArray(raw.outcomes) || !raw.outcomes.every(isOutcome)) throw new Error('bad outcomes in reply');
      reply.outcomes = raw.outcomes;
    }
    if (raw.head !== undefined) {
      if (!Number.isSafeInteger(raw.head)) throw new Error('bad head in reply');
      reply.head = raw.head as number;
    }
    if (raw.then !== undefined) {
      if (raw.then !== 'appended' && raw.then !== 'skipped' && raw.then !== 'failed') throw new Error('bad then in reply');
      reply.then = raw.then;
    }
    if (raw.rebuild !== undefined) {
      if (!isRebuildReport(raw.rebuild)) throw new Error('bad rebuild report in reply');
      const { differed, changedConversations, conversations, entries, headSeq } = raw.rebuild;
      reply.rebuild = { differed, changedConversations: [...changedConversations], conversations, entries, headSeq };
    }
    return reply;
  }
  const err = raw.error;
  if (raw.ok !== false || !isObj(err) || !isStr(err.code) || typeof err.retryable !== 'boolean') {
    throw new Error('malformed inbox owner reply');
  }
  return { ok: false, error: err as unknown as WireError };
}

function isOutcome(v: unknown): v is WireOutcome {
  return (
    isObj(v) &&
    Number.isSafeInteger(v.seq) &&
    typeof v.duplicate === 'boolean' &&
    (v.prevSeq === undefined || Number.isSafeInteger(v.prevSeq)) &&
    (v.original === undefined || (v.duplicate === true && isOriginal(v.original, v.seq)))
  );
}

/** A duplicate's original: an entry as checkEntry sees one, stored at the outcome's seq. */
function isOriginal(v: unknown, seq: unknown): boolean {
  if (!isObj(v) || v.seq !== seq) return false;
  const { seq: _seq, ...entry } = v;
  try {
    checkEntry(entry);
    return true;
  } catch {
    return false;
  }
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function isRebuildReport(v: unknown): v is ConversationRebuildReport {
  return (
    isObj(v) &&
    typeof v.differed === 'boolean' &&
    Array.isArray(v.changedConversations) &&
    v.changedConversations.every(isStr) &&
    isCount(v.conversations) &&
    isCount(v.entries) &&
    isCount(v.headSeq)
  );
}
