/**
 * The socket-server port (after colyseus' transport/uwebsockets vs transport/ws): the gateway's
 * logic never touches uWebSockets.js or `ws` directly, so either can carry it.
 */

/** What the gateway may read of an HTTP request or a WebSocket upgrade. */
export interface TransportRequest {
  /** Upper-case, e.g. "GET". */
  method: string;
  /** Path without the query string. */
  path: string;
  /** Raw query string without '?'. May carry a token: never log it. */
  query: string;
  /** Header by lower-case name. */
  header(name: string): string | undefined;
  /**
   * The peer's IP address as the socket sees it (never a forwarded header), in text form
   * (IPv6 possibly expanded or IPv4-mapped); undefined when the transport cannot tell.
   */
  remoteAddress?: string;
}

export interface HttpRequest extends TransportRequest {
  body: Buffer;
  /** The body was larger than the transport's limit and was not read. */
  bodyTooLarge: boolean;
}

export interface HttpReply {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** One accepted WebSocket, as the gateway sees it. */
export interface SocketConnection {
  /** Sends a text frame; false when the socket is closed or the transport dropped the frame. */
  send(text: string): boolean;
  /** Bytes queued for this socket and not yet written to the kernel. */
  bufferedAmount(): number;
  /** Closes with a close frame (code, short reason). Idempotent. */
  close(code: number, reason: string): void;
  /** Drops the connection without a closing handshake (for a peer that is not reading). */
  terminate(): void;
  readonly isOpen: boolean;
}

/** Per-connection callbacks the gateway returns from `open`. */
export interface ConnectionListener {
  /** `data` is only valid during the call (uWS reuses the buffer): decode synchronously. */
  message(data: ArrayBuffer | Buffer, isBinary: boolean): void;
  /** After this the connection is gone; it is called exactly once. */
  closed(code: number): void;
}

export type UpgradeDecision<S> = { accept: true; session: S } | { accept: false; reply: HttpReply };

export interface TransportHandlers<S> {
  /** The one path where WebSocket upgrades are accepted (e.g. "/v1/ws"). */
  wsPath: string;
  /**
   * Synchronous whenever the token verifier is: uWS then accepts the socket inside its upgrade
   * callback, the one path free of its async-upgrade bug (see uws-transport.ts).
   */
  upgrade(req: TransportRequest): UpgradeDecision<S> | Promise<UpgradeDecision<S>>;
  open(conn: SocketConnection, session: S): ConnectionListener;
  http(req: HttpRequest): Promise<HttpReply>;
}

export interface TransportLimits {
  /** Hard cap of one WebSocket message: beyond it the transport closes with 1009. */
  maxPayloadBytes: number;
  /** HTTP request bodies above this are not read (the handler answers TOO_LARGE). */
  maxHttpBodyBytes: number;
  /** Per-socket send buffer above which the transport may drop frames (the gateway closes first). */
  maxBackpressureBytes: number;
  /** A socket silent (no pong either) this long is closed. */
  idleTimeoutSeconds: number;
}

export type TransportName = 'uws' | 'ws';

/** What an operator asks for: `auto` takes uws where its native binary loads, else ws. */
export type TransportChoiceName = TransportName | 'auto';

export interface Transport {
  readonly name: TransportName;
  /** True when this is the native uWebSockets.js server. */
  readonly native: boolean;
  /** Resolves with the bound port (supports port 0). `reusePort`: other threads listen on it too. */
  listen(host: string, port: number, options?: { reusePort?: boolean }): Promise<number>;
  /** Stops accepting connections and requests; open sockets stay. */
  stopListening(): void;
  /** Closes every remaining socket (code 1001) and connection. */
  close(): Promise<void>;
}

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function statusLine(status: number): string {
  return `${status} ${STATUS_TEXT[status] ?? 'Unknown'}`;
}

/** Close codes the gateway uses (RFC 6455 §7.4; 4xxx are ours, docs/protocol.md). */
export const CLOSE_CODES = {
  goingAway: 1001,
  policyViolation: 1008,
  messageTooBig: 1009,
  internalError: 1011,
  tryAgainLater: 1013,
  /** The socket's token expired and was not renewed with `auth`: reconnect with a fresh token. */
  tokenExpired: 4401,
  /** The user opened more sockets on this gateway than `perUserSockets`: this, the oldest, went. */
  tooManySockets: 4429,
  /** v1.1: a newer login displaced this session (the tenant's login policy); do not reconnect. */
  replaced: 4409,
} as const;
