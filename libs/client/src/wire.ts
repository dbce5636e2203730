/**
 * The parts of the wire protocol (docs/protocol.md) the client speaks. Kept here, not imported
 * from @seqline/protocol, so the SDK carries no server-side validation code at runtime.
 */
import { parseKicked, type KickedFrame } from './kicked.ts';

export type ErrorCode =
  'BAD_REQUEST' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'TOO_LARGE' | 'RATE_LIMITED' | 'OVERLOADED' | 'RECALL_EXPIRED' | 'INTERNAL';

export const ERROR_CODES: readonly ErrorCode[] = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'TOO_LARGE',
  'RATE_LIMITED',
  'OVERLOADED',
  'RECALL_EXPIRED',
  'INTERNAL',
];

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type EntryKind = 'msg' | 'read' | 'receipt' | 'recall' | 'group' | 'tick' | 'edit' | 'delete' | 'clear';
export const ENTRY_KINDS: readonly EntryKind[] = ['msg', 'read', 'receipt', 'recall', 'group', 'tick', 'edit', 'delete', 'clear'];

export interface Conv {
  type: 'user' | 'group';
  id: string;
}

/** One item of the inbox. Fields beyond the required ones are passed through unchecked. */
export interface Entry {
  seq: number;
  kind: EntryKind;
  appinfo: string;
  conv: Conv;
  from: string;
  sendTime: number;
  type?: string;
  body?: Json;
  referSeq?: number;
  seqs?: number[];
  readBy?: string[];
  /** `from`: the recalled message's sender (an appinfo is unique per sender); absent in older recalls. */
  recall?: { appinfo: string; sendTime: number; from?: string };
  /** Users mentioned by a message (or "@all"). */
  mentions?: string[];
  /** kind "edit": the message's new content. */
  edit?: { appinfo: string; sendTime: number; type: string; body: Json; editedAt: number };
  /** kinds "clear" and "read": the conversation is cleared / read up to this seq. */
  upToSeq?: number;
}

export interface GroupMessage extends Entry {
  gseq: number;
}

export type Recipient = { user: string } | { group: string };

/** A read-fanout group whose stream has news past the user's cursor. */
export interface GroupNews {
  id: string;
  headGseq: number;
  cursor: number;
}

/**
 * One conversation of the inbox as the server computed it, exact as of inbox seq
 * `asOfSeq`. Every count is the server's; the SDK never derives one. A read-fanout group may
 * carry its position in gseq terms (`lastGseq`, `readGseq`) instead of `lastSeq` / `readSeq`.
 */
export interface Conversation {
  conv: Conv;
  lastSeq: number;
  /** The newest visible message (latest edit applied), null when none is visible. */
  last: Entry | null;
  readSeq: number;
  /** Messages from others after readSeq, not recalled, deleted or cleared. */
  unread: number;
  /** Of those, the ones that mention the user (or `@all`). */
  mentions: number;
  clearedSeq: number;
  asOfSeq: number;
  /**
   * Group conversations: the group's name (it follows group.rename). Absent for 1:1 chats (show
   * the peer's id, or your app's name for it) and for a group whose notices in your inbox predate
   * names (show its id, or ask group.info).
   */
  title?: string;
  lastGseq?: number;
  readGseq?: number;
  /** Read-fanout groups: true when `unread` is a lower bound (the server counts a bounded stretch of the stream). */
  unreadCapped?: boolean;
  /** Only in `conversations` answers asked with `lastMessages`: its last visible messages, ascending. */
  messages?: Entry[];
}

export interface SyncResult {
  entries: Entry[];
  headSeq: number;
  hasMore: boolean;
  groups: GroupNews[];
  /** The conversations the returned entries touch (absent from a server that predates them). */
  convs?: Conversation[];
}

export interface ConversationsResult {
  convs: Conversation[];
  /** The inbox seq the list is exact at: sync continues from here after a bootstrap. */
  headSeq: number;
  hasMore: boolean;
}

/** `read`: a conversation's read cursor (moves forward only), or a list of seqs (receipts to their senders). */
export type ReadArgs = { conv: Conv; upToSeq: number } | { seqs: number[] };

export type Tier = 'small' | 'large' | 'huge';

/**
 * Every op: its arguments and its result (without `id` / `ok`). The group ops name the
 * group `group`, not `id` as the protocol's table does: a frame's `id` is the request number,
 * so a group `id` would collide with it (the project's docs/protocol.md and the gateway agree).
 */
export interface Ops {
  send: {
    args: { appinfo: string; to: Recipient; type: string; body: Json; mentions?: string[] };
    /** `body`: present only when the server stored another body than the one sent (a before-send rewrite). */
    result: { seq: number; sendTime: number; duplicate: boolean; body?: Json };
  };
  sync: { args: { maxSeq: number; limit?: number }; result: SyncResult };
  history: { args: { beforeSeq?: number; limit?: number; conv?: Conv }; result: { entries: Entry[]; hasMore: boolean } };
  read: { args: ReadArgs; result: { seq: number } };
  /** `from`: whose message (default: you; a group admin names the member). */
  recall: { args: { appinfo: string; from?: string }; result: { seq: number } };
  conversations: { args: { limit?: number; beforeLastSeq?: number; lastMessages?: number }; result: ConversationsResult };
  /** Delete for me: the entries vanish from this user's inbox on every device. */
  delete: { args: { seqs: number[] }; result: { seq: number } };
  /** Clear history for me, up to `upToSeq` (default: the conversation's last seq). */
  clear: { args: { conv: Conv; upToSeq?: number }; result: { seq: number } };
  /** The sender changes a message's body (same window as recall). */
  edit: { args: { appinfo: string; body: Json; type?: string; editId?: string }; result: { seq: number } };
  'group.create': {
    args: { name: string; members: string[]; group?: string };
    result: { group: string; tier: Tier };
  };
  'group.add': { args: { group: string; members: string[] }; result: { tier: Tier; memberCount: number } };
  'group.remove': { args: { group: string; members: string[] }; result: { tier: Tier; memberCount: number } };
  /** The admin renames the group (create's limits: 1-128 characters); members' `title`s follow. */
  'group.rename': { args: { group: string; name: string }; result: { group: string; name: string } };
  'group.info': {
    args: { group: string };
    result: { group?: string; name: string; tier: Tier; memberCount: number; fanout: 'write' | 'read'; headGseq: number };
  };
  'group.history': {
    args: { group: string; afterGseq?: number; beforeGseq?: number; limit?: number };
    result: { messages: GroupMessage[]; hasMore: boolean };
  };
  'group.ack': { args: { group: string; gseq: number }; result: { cursor: number } };
  /** Extension (the project's docs/protocol.md): who read a read-fanout message. */
  'group.readers': {
    args: { group: string; gseq: number; after?: string; limit?: number };
    result: { gseq: number; readCount: number; unreadCount: number; readers: string[]; hasMore: boolean };
  };
  /** Extension: renews the open socket's token (same user and tenant); `exp` in unix seconds. */
  auth: { args: { token: string }; result: { exp: number | null } };
}

export type OpName = keyof Ops;
export type OpArgs<O extends OpName> = Ops[O]['args'];
export type OpResult<O extends OpName> = Ops[O]['result'];

/** A reply frame: `{id, ok: true, ...result}` or `{id, ok: false, error}`. */
export type ReplyFrame =
  | { kind: 'reply'; id: number | null; ok: true; result: Record<string, unknown> }
  | { kind: 'reply'; id: number | null; ok: false; error: { code: ErrorCode | (string & {}); message: string } };

export interface PushFrame {
  kind: 'push';
  prevSeq: number;
  entries: Entry[];
  /** Optional: the conversations these entries touch. */
  convs?: Conversation[];
}

/** Extension frame: new messages of a read-fanout group stream (`{"op": "group.push", ...}`). */
export interface GroupPushFrame {
  kind: 'group.push';
  group: string;
  prevGseq: number;
  messages: GroupMessage[];
}

export type ServerFrame = ReplyFrame | PushFrame | GroupPushFrame | KickedFrame;

// ---- minimal, safe guards: enough that the sync logic never acts on a malformed seq ----

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A seq is a non-negative safe integer (0 means "nothing yet"). */
export function isSeq(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

export function isEntry(v: unknown): v is Entry {
  if (!isObj(v)) return false;
  const conv = v['conv'];
  return (
    isSeq(v['seq']) &&
    v['seq'] > 0 &&
    typeof v['kind'] === 'string' &&
    (ENTRY_KINDS as readonly string[]).includes(v['kind']) &&
    typeof v['appinfo'] === 'string' &&
    isObj(conv) &&
    (conv['type'] === 'user' || conv['type'] === 'group') &&
    typeof conv['id'] === 'string' &&
    typeof v['from'] === 'string' &&
    typeof v['sendTime'] === 'number'
  );
}

export function isEntryList(v: unknown): v is Entry[] {
  return Array.isArray(v) && v.every(isEntry);
}

const isCount = (v: unknown): boolean => isSeq(v);
const optionalSeq = (v: unknown): boolean => v === undefined || isSeq(v);

export function isConversation(v: unknown): v is Conversation {
  if (!isObj(v)) return false;
  const conv = v['conv'];
  return (
    isObj(conv) &&
    (conv['type'] === 'user' || conv['type'] === 'group') &&
    typeof conv['id'] === 'string' &&
    isSeq(v['lastSeq']) &&
    (v['last'] === null || isEntry(v['last'])) &&
    isSeq(v['readSeq']) &&
    isCount(v['unread']) &&
    isCount(v['mentions']) &&
    isSeq(v['clearedSeq']) &&
    isSeq(v['asOfSeq']) &&
    (v['title'] === undefined || typeof v['title'] === 'string') &&
    optionalSeq(v['lastGseq']) &&
    optionalSeq(v['readGseq']) &&
    (v['messages'] === undefined || isEntryList(v['messages']))
  );
}

export function isConversationList(v: unknown): v is Conversation[] {
  return Array.isArray(v) && v.every(isConversation);
}

/** True when seqs strictly increase and all are above `after`. */
export function isAscendingAfter(entries: readonly Entry[], after: number): boolean {
  let prev = after;
  for (const e of entries) {
    if (e.seq <= prev) return false;
    prev = e.seq;
  }
  return true;
}

/** Parses one text frame from the server; null when it is not a frame we understand. */
export function parseServerFrame(text: string): ServerFrame | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObj(v)) return null;
  if (v['op'] === 'push') {
    if (!isSeq(v['prevSeq']) || !isEntryList(v['entries'])) return null;
    const push: PushFrame = { kind: 'push', prevSeq: v['prevSeq'], entries: v['entries'] };
    // Malformed convs are dropped, not the entries: the client then asks sync for them.
    if (isConversationList(v['convs'])) push.convs = v['convs'];
    return push;
  }
  if (v['op'] === 'kicked') return parseKicked(v);
  if (v['op'] === 'group.push') {
    const messages = v['messages'];
    if (
      typeof v['group'] !== 'string' ||
      !isSeq(v['prevGseq']) ||
      !isEntryList(messages) ||
      !messages.every((m) => isSeq((m as unknown as Obj)['gseq']))
    )
      return null;
    return { kind: 'group.push', group: v['group'], prevGseq: v['prevGseq'], messages: messages as GroupMessage[] };
  }
  const id = v['id'];
  if (!(id === null || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  if (v['ok'] === true) {
    const { id: _id, ok: _ok, ...result } = v;
    return { kind: 'reply', id, ok: true, result };
  }
  if (v['ok'] === false) {
    const err = v['error'];
    const code = isObj(err) && typeof err['code'] === 'string' ? err['code'] : 'INTERNAL';
    const message = isObj(err) && typeof err['message'] === 'string' ? err['message'] : 'error without message';
    return { kind: 'reply', id, ok: false, error: { code, message } };
  }
  return null;
}
