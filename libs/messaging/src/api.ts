/** The application API the gateway calls; one method per protocol op. Callers are authenticated. */
import type { Conv, ConversationState, Entry, Json, PushMessage, Tier } from '@seqline/core';

export interface Caller {
  tenant: string;
  user: string;
}

export type Recipient = { user: string } | { group: string };

export interface SendInput {
  appinfo: string;
  to: Recipient;
  type: string;
  body: Json;
  /** User ids mentioned (members of the group, or the 1:1 peer), or ['@all'] in a group. */
  mentions?: string[];
}

export interface SendResult {
  seq: number;
  sendTime: number;
  duplicate: boolean;
  /** The body stored, only when it differs from the one sent (a before-send rewrite). */
  body?: Json;
}

export interface GroupNews {
  id: string;
  headGseq: number;
  cursor: number;
}

export interface SyncResult {
  entries: Entry[];
  headSeq: number;
  hasMore: boolean;
  groups: GroupNews[];
  /** Every conversation the returned entries touch, each at or past its newest entry here. */
  convs: ConversationState[];
  /**
   * Touched conversations whose state the index had not reached within the wait (so not in
   * `convs`); absent when none.
   */
  convsPending?: Conv[];
}

export interface HistoryResult {
  entries: Entry[];
  hasMore: boolean;
}

export interface GroupInfo {
  id: string;
  name: string;
  tier: Tier;
  memberCount: number;
  fanout: 'write' | 'read';
  headGseq: number;
}

export interface GroupHistoryInput {
  id: string;
  afterGseq?: number;
  beforeGseq?: number;
  limit: number;
}

export interface GroupHistoryResult {
  messages: Array<Entry & { gseq: number }>;
  hasMore: boolean;
}

/** Extension op `group.readers` (docs/large-groups.md): who read a read-fanout message. */
export interface GroupReadersInput {
  id: string;
  gseq: number;
  /** Page after this reader id (readers are sorted). */
  after?: string;
  limit?: number;
}

export interface GroupReadersResult {
  gseq: number;
  /** Members (other than the sender) allowed to read it whose cursor reached it. */
  readCount: number;
  /** Members allowed to read it who have not yet. */
  unreadCount: number;
  readers: string[];
  hasMore: boolean;
}

/** `conversations`: one page of the list (checked by the edge: limit 1-500, lastMessages 0-50). */
export interface ConversationsInput {
  limit: number;
  beforeLastSeq?: number;
  /** Each listed conversation's last visible messages, 0 = none. */
  lastMessages: number;
}

export interface ListedConversation {
  state: ConversationState;
  /** Its last `lastMessages` visible messages, ascending; absent when none were asked. */
  messages?: Entry[];
}

export interface ConversationsResult {
  convs: ListedConversation[];
  /** The inbox seq the list is exact at: sync from here to get everything after it. */
  headSeq: number;
  hasMore: boolean;
}

/** `edit`: new content for the caller's own message. */
export interface EditInput {
  appinfo: string;
  body: Json;
  /** Absent: the message keeps its type. */
  type?: string;
  /**
   * The client's id for this edit (a client appinfo; the SDK sends a UUIDv7): a retry with it
   * redoes the same edit instead of making another. Absent: each call is a new edit.
   */
  editId?: string;
}

export interface Messaging {
  send(caller: Caller, input: SendInput): Promise<SendResult>;
  sync(caller: Caller, maxSeq: number, limit: number): Promise<SyncResult>;
  history(caller: Caller, beforeSeq: number, limit: number): Promise<HistoryResult>;
  read(caller: Caller, seqs: number[]): Promise<{ seq: number }>;
  /**
   * Recalls `sender`'s message `appinfo` (appinfos are unique per sender): the caller's own by
   * default; a group admin names the member whose message it recalls.
   */
  recall(caller: Caller, appinfo: string, sender?: string): Promise<{ seq: number }>;
  /** The caller's conversations, newest activity first. */
  conversations(caller: Caller, input: ConversationsInput): Promise<ConversationsResult>;
  /** `history {conv}`: one conversation's visible entries, newest first. */
  conversationHistory(caller: Caller, conv: Conv, beforeSeq: number, limit: number): Promise<HistoryResult>;
  /** `read {conv, upToSeq}`: moves the conversation's read cursor (never back). */
  readConversation(caller: Caller, conv: Conv, upToSeq: number): Promise<{ seq: number }>;
  /** `delete {seqs}`: hides entries of the caller's inbox from all its devices. */
  deleteForMe(caller: Caller, seqs: number[]): Promise<{ seq: number }>;
  /** `clear {conv, upToSeq?}`: hides a conversation's entries up to a seq (default: its last). */
  clear(caller: Caller, conv: Conv, upToSeq?: number): Promise<{ seq: number }>;
  /** `edit`: sender only, within the recall window. */
  edit(caller: Caller, input: EditInput): Promise<{ seq: number }>;
  createGroup(caller: Caller, input: { name: string; members: string[]; id?: string }): Promise<{ id: string; tier: Tier }>;
  addMembers(caller: Caller, id: string, members: string[]): Promise<{ tier: Tier; memberCount: number }>;
  removeMembers(caller: Caller, id: string, members: string[]): Promise<{ tier: Tier; memberCount: number }>;
  /** The admin renames the group; every member's conversation title follows (a group.rename notice). */
  renameGroup(caller: Caller, input: { id: string; name: string }): Promise<{ id: string; name: string }>;
  groupInfo(caller: Caller, id: string): Promise<GroupInfo>;
  groupHistory(caller: Caller, input: GroupHistoryInput): Promise<GroupHistoryResult>;
  groupAck(caller: Caller, id: string, gseq: number): Promise<{ cursor: number }>;
  groupReaders(caller: Caller, input: GroupReadersInput): Promise<GroupReadersResult>;
  /** Push for this caller's inbox, delivered to this process; returns an unsubscribe. */
  subscribe(caller: Caller, onPush: (msg: PushMessage) => void): () => void;
}
