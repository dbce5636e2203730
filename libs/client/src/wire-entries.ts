/**
 * The wire's data shapes the client reads (docs/protocol.md): entries, conversations and the
 * answers that carry them. Split from wire.ts, which re-exports them.
 */

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
