/**
 * The interfaces the copy-holder model (model.ts) drives and its oracle (oracle.ts) reads
 * through: the messaging API as callers see it, and the stores that hold the truth.
 */
import type { Conv, ConversationState, Entry, GroupStore, GroupStreamStore, Json, TimelineStore } from '@seqline/core';

export interface ModelCaller {
  tenant: string;
  user: string;
}

/** A conversation's state as the oracle reads it: the fields both the API and the wire carry. */
export type ModelConvState = Pick<
  ConversationState,
  'conv' | 'last' | 'lastSeq' | 'readSeq' | 'unread' | 'mentions' | 'clearedSeq' | 'asOfSeq'
>;

/**
 * The part of the messaging API (libs/messaging's Messaging, one method per protocol op) the
 * model drives and the oracle reads its views through: Messaging itself in process, an adapter
 * over one socket per user on the wire.
 */
export interface ModelMessaging {
  createGroup(caller: ModelCaller, input: { name: string; members: string[]; id?: string }): Promise<unknown>;
  addMembers(caller: ModelCaller, id: string, members: string[]): Promise<unknown>;
  removeMembers(caller: ModelCaller, id: string, members: string[]): Promise<unknown>;
  groupInfo(caller: ModelCaller, id: string): Promise<{ fanout: 'write' | 'read' }>;
  send(
    caller: ModelCaller,
    input: { appinfo: string; to: { group: string }; type: string; body: Json; mentions?: string[] },
  ): Promise<unknown>;
  recall(caller: ModelCaller, appinfo: string, sender?: string): Promise<unknown>;
  edit(caller: ModelCaller, input: { appinfo: string; body: Json; editId?: string }): Promise<{ seq: number }>;
  conversations(
    caller: ModelCaller,
    input: { limit: number; lastMessages: number },
  ): Promise<{ convs: Array<{ state: ModelConvState; messages?: Entry[] }>; headSeq: number }>;
  conversationHistory(caller: ModelCaller, conv: Conv, beforeSeq: number, limit: number): Promise<{ entries: Entry[] }>;
  sync(caller: ModelCaller, maxSeq: number, limit: number): Promise<{ entries: Entry[]; convs: ModelConvState[]; convsPending?: Conv[] }>;
}

/** The stores the oracle reads the truth from (both engines' adapters fit). */
export interface ModelStores {
  timeline: Pick<TimelineStore, 'readAfter' | 'getEntry'>;
  groups: Pick<GroupStore, 'getMembership'>;
  groupStreams: Pick<GroupStreamStore, 'readAfter'>;
}
