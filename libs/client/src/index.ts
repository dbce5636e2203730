/**
 * The browser-safe entry: nothing reachable from here imports a Node builtin or `ws` (the
 * pack test bundles it for the browser to prove it). Node-only parts live in `./node`.
 */
export { SeqlineClient } from './client.ts';
export type {
  ClientEvents,
  ClientState,
  EditedMessage,
  HiddenEntries,
  SendInput,
  SendOutcome,
  SeqlineClientOptions,
} from './client-options.ts';
export { ConversationStore, convKey } from './conversation-store.ts';
export type { LoadConversationsOptions, MarkReadOutcome } from './conversation-sync.ts';
export { SeqlineClientError } from './errors.ts';
export { KICKED_CLOSE_CODE, type KickedBy } from './kicked.ts';
export type { ClientErrorCode, ClientSideCode } from './errors.ts';
export { MemoryMaxSeqStore } from './max-seq-store.ts';
export type { MaxSeqStore } from './max-seq-store.ts';
export { SyncEngine } from './sync-engine.ts';
export { GroupFollower } from './group-follower.ts';
export type { GroupFollowerOptions, GroupPushOutcome } from './group-follower.ts';
export type { PushOutcome, SyncEngineOptions } from './sync-engine.ts';
export type { ClientLogger } from './logger.ts';
export type { BackoffOptions } from './backoff.ts';
export type { TokenTransport, WebSocketConstructor, WebSocketLike } from './socket.ts';
export { ERROR_CODES, ENTRY_KINDS } from './wire.ts';
export type {
  Conv,
  Conversation,
  ConversationsResult,
  Entry,
  EntryKind,
  ErrorCode,
  GroupMessage,
  GroupNews,
  GroupPushFrame,
  Json,
  OpArgs,
  OpName,
  OpResult,
  Ops,
  ReadArgs,
  Recipient,
  SyncResult,
  Tier,
} from './wire.ts';
