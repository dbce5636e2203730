/** The client's options, events and send shapes (the SDK's public types besides the wire's). */
import type { BackoffOptions } from './backoff.ts';
import type { ClientLogger } from './logger.ts';
import type { MaxSeqStore } from './max-seq-store.ts';
import type { TokenTransport, WebSocketConstructor } from './socket.ts';
import type { Entry, GroupMessage, GroupNews, Json, Recipient } from './wire.ts';

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
}

export interface SendInput {
  to: Recipient;
  type: string;
  body: Json;
  /** Message id; a UUIDv7 is generated when absent. Pass the same one to resend after a crash. */
  appinfo?: string;
}

export interface SendOutcome {
  seq: number;
  sendTime: number;
  duplicate: boolean;
  appinfo: string;
}
