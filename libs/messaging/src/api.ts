/** The application API the gateway calls; one method per protocol op. Callers are authenticated. */
import type { Entry, Json, PushMessage, Tier } from '@seqline/core';

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
}

export interface SendResult {
  seq: number;
  sendTime: number;
  duplicate: boolean;
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

export interface Messaging {
  send(caller: Caller, input: SendInput): Promise<SendResult>;
  sync(caller: Caller, maxSeq: number, limit: number): Promise<SyncResult>;
  history(caller: Caller, beforeSeq: number, limit: number): Promise<HistoryResult>;
  read(caller: Caller, seqs: number[]): Promise<{ seq: number }>;
  recall(caller: Caller, appinfo: string): Promise<{ seq: number }>;
  createGroup(caller: Caller, input: { name: string; members: string[]; id?: string }): Promise<{ id: string; tier: Tier }>;
  addMembers(caller: Caller, id: string, members: string[]): Promise<{ tier: Tier; memberCount: number }>;
  removeMembers(caller: Caller, id: string, members: string[]): Promise<{ tier: Tier; memberCount: number }>;
  groupInfo(caller: Caller, id: string): Promise<GroupInfo>;
  groupHistory(caller: Caller, input: GroupHistoryInput): Promise<GroupHistoryResult>;
  groupAck(caller: Caller, id: string, gseq: number): Promise<{ cursor: number }>;
  groupReaders(caller: Caller, input: GroupReadersInput): Promise<GroupReadersResult>;
  /** Push for this caller's inbox, delivered to this process; returns an unsubscribe. */
  subscribe(caller: Caller, onPush: (msg: PushMessage) => void): () => void;
}
