/** The client's options, events and send shapes (the SDK's public types besides the wire's). */
import type { BackoffOptions } from './backoff.ts';
import type { KickedBy } from './kicked.ts';
import type { ClientLogger } from './logger.ts';
import type { MaxSeqStore } from './max-seq-store.ts';
import type { TokenTransport, WebSocketConstructor } from './socket.ts';
import type { Conv, Conversation, Entry, GroupMessage, GroupNews, Json, Recipient } from './wire.ts';

export interface SeqlineClientOptions {
  /** `ws://host:port` (the `/v1/ws` path is added) or a full socket URL. */
  url: string;
  /** A JWT, or a function asked for a fresh one before every (re)connect. */
  token: string | (() => Promise<string>);
  /** Where max seq survives restarts. Default: in memory (a restart syncs everything). */
  store?: MaxSeqStore;
  /** Per attempt, covering a wait for the connection and the round trip. Default 5000. */
  requestTimeoutMs?: number;
  /** Extra attempts of a `send` after a timeout, a disconnect or OVERLOADED/RATE_LIMITED. Default 3. */
  maxResends?: number;
  /**
   * Default: the global WebSocket (browsers, Node ≥ 22), else the optional peer `ws` (Node 20).
   * Pass `WebSocket` from `ws` to send the token in a header on Node ≥ 22 too.
   */
  WebSocket?: WebSocketConstructor;
  /**
   * `header` (`Authorization: Bearer`) or `query` (`?token=`). Default: `header` for `ws` or
   * another non-global constructor on Node; `query` for a global WebSocket and in browsers,
   * which cannot set headers.
   */
  tokenTransport?: TokenTransport;
  /**
   * This device, sent in the socket URL for the tenant's login policy. A token that names
   * a device wins; a different value here is then refused. On `kicked` the client stops.
   */
  device?: { dev?: string; plat?: 'ios' | 'android' | 'web' | 'desktop' };
  logger?: ClientLogger;
  /** Entries per sync page. Default 200. */
  syncPageLimit?: number;
  reconnectBackoff?: BackoffOptions;
  /** Wait before retrying after OVERLOADED / RATE_LIMITED, or a failed sync. */
  busyBackoff?: BackoffOptions;
  connectTimeoutMs?: number;
  /** Consecutive unanswered requests, with nothing at all heard, before the socket is dropped. Default 2. */
  silentTimeoutsBeforeReconnect?: number;
  /** Follow read-fanout group streams and deliver them through `groupMessages`. Default true. */
  followGroups?: boolean;
  /**
   * Keep `conversations()` current. When a push carries no `convs`, the client then asks `sync`
   * for the states of the conversations it touched. Default true.
   */
  trackConversations?: boolean;
}

/** Entries this user no longer sees, from a `delete` or `clear` entry (made on any device). */
export type HiddenEntries =
  { by: 'delete'; seq: number; seqs: number[] } | { by: 'clear'; seq: number; conv: Conv; upToSeq: number | null };

/** A message's new content, from an `edit` entry. */
export interface EditedMessage {
  seq: number;
  conv: Conv;
  from: string;
  edit: NonNullable<Entry['edit']>;
}

export type ClientState = 'connected' | 'disconnected' | 'closed';

export interface ClientEvents extends Record<string, unknown> {
  /** New inbox entries: ascending, each exactly once, no entry skipped. */
  entries: Entry[];
  /** Read-fanout groups with news past the user's cursor (page them with groupHistory). */
  groups: GroupNews[];
  state: ClientState;
  /** A full sync finished; max seq is the inbox head as of that sync. */
  synced: { maxSeq: number };
  /** New messages of a read-fanout group stream: ascending by gseq, each once per session. */
  groupMessages: { group: string; messages: GroupMessage[] };
  /** The conversation list changed (newest activity first): the server's states, never counted here. */
  conversations: Conversation[];
  /** Entries to remove from what the app shows: deleted for me, or cleared, on any device. */
  hidden: HiddenEntries;
  /** A message was edited by its sender: show `edit.body` instead. */
  edited: EditedMessage;
  /** A newer login (`by`) replaced this session; the client is closed and does not reconnect. */
  kicked: { by: KickedBy };
}

export interface SendInput {
  to: Recipient;
  type: string;
  body: Json;
  /** Message id; a UUIDv7 is generated when absent. Pass the same one to resend after a crash. */
  appinfo?: string;
  /** User ids this message mentions, or `['@all']`; counted in their conversations' `mentions`. */
  mentions?: string[];
}

export interface SendOutcome {
  seq: number;
  sendTime: number;
  duplicate: boolean;
  appinfo: string;
  /** The body the server stored, only when it differs from the one sent (the app's before-send hook rewrote it). */
  body?: Json;
}
