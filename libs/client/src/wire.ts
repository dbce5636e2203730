/**
 * The parts of the wire protocol (docs/protocol.md) the client speaks. Kept here, not imported
 * from @seqline/protocol, so the SDK carries no server-side validation code at runtime.
 */
import { parseKicked, type KickedFrame } from './kicked.ts';
import type { Conv, Conversation, ConversationsResult, Entry, GroupMessage, Json, Recipient, SyncResult } from './wire-entries.ts';
import { isConversationList, isEntryList, isObj, isSeq, type Obj } from './wire-guards.ts';

export * from './wire-entries.ts';
export * from './wire-guards.ts';

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
