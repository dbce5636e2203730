/**
 * HTTP framing rules both transports apply before the gateway sees a request, so that
 * uWebSockets.js and node:http serve and refuse exactly the same requests (docs/decisions.md,
 * "HTTP framing"). uWS 20.30's own parser refuses malformed requests by closing (or by never
 * answering), and after an answer flagged `Connection: close` it still serves requests
 * pipelined behind it; so a request refused here is not answered either: the connection is
 * closed at once, and nothing behind it on that connection is parsed.
 */

/** Methods the gateway routes; any other (TRACE, CONNECT, WebDAV, ...) is refused. */
export const SUPPORTED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The only methods whose requests may carry content. */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);
/** uWS 20.30 stops answering a request with more header lines than this. */
export const MAX_HEADER_COUNT = 48;
/** node:http's default limit (request line + headers); uWS accepts more, so both apply this. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** Header lines as received: lower-case name, value. */
export type HeaderLines = ReadonlyArray<readonly [name: string, value: string]>;

/** What the framing check reads of a request. */
export interface RawRequest {
  method: string;
  /** The request target as sent: path and query. */
  target: string;
  lines: HeaderLines;
  /** Repeated headers joined (see joinHeaders). */
  headers: ReadonlyMap<string, string>;
}

/**
 * A repeated header's values joined with ", " in arrival order (RFC 9110 §5.3). Both transports
 * expose headers this way, so no consumer can silently pick one of two values: a joined
 * Authorization, Host or Content-Length is refused as such.
 */
export function joinHeaders(lines: HeaderLines): Map<string, string> {
  const headers = new Map<string, string>();
  for (const [name, value] of lines) {
    const previous = headers.get(name);
    headers.set(name, previous === undefined ? value : `${previous}, ${value}`);
  }
  return headers;
}

/** Why the request must be refused (closed without an answer), or null when it may be served. */
export function framingFault(req: RawRequest): string | null {
  if (!SUPPORTED_METHODS.has(req.method)) return 'unsupported method';
  // origin-form only, visible ASCII (RFC 9112 §3.2): no absolute-form, "*", spaces or raw UTF-8.
  if (!/^\/[\x21-\x7e]*$/.test(req.target)) return 'malformed request target';
  if (req.lines.length > MAX_HEADER_COUNT) return 'too many header lines';
  const bytes = req.lines.reduce((sum, [name, value]) => sum + name.length + value.length + 4, req.method.length + req.target.length + 11);
  if (bytes > MAX_HEADER_BYTES) return 'header section too large';
  const host = req.headers.get('host');
  if (host === undefined || host.includes(',')) return 'missing or repeated Host';
  // Chunked bodies are not accepted at all: uWS takes any Transfer-Encoding (even "xchunked")
  // as chunked where node refuses it, the kind of disagreement request smuggling lives on.
  if (req.headers.has('transfer-encoding')) return 'Transfer-Encoding';
  const length = req.headers.get('content-length');
  if (length !== undefined && !/^\d{1,15}$/.test(length)) return 'malformed or repeated Content-Length';
  // Content on GET/HEAD/... has no meaning here; a front proxy that ignores it would desync.
  if (!BODY_METHODS.has(req.method) && length !== undefined && Number(length) > 0) return 'content on a method without one';
  if (BODY_METHODS.has(req.method) && req.headers.has('upgrade')) return 'Upgrade on a request with content';
  return null;
}

/** The declared body size (0 without Content-Length); only meaningful after framingFault passed. */
export function declaredLength(headers: ReadonlyMap<string, string>): number {
  return Number(headers.get('content-length') ?? '0');
}

/**
 * A valid RFC 6455 opening handshake to `wsPath`. Anything else with an Upgrade header is served
 * as plain HTTP (the Upgrade ignored), so /v1/ws answers 426 on both transports.
 */
export function isWebSocketHandshake(method: string, path: string, wsPath: string, headers: ReadonlyMap<string, string>): boolean {
  const connection = (headers.get('connection') ?? '')
    .toLowerCase()
    .split(',')
    .map((token) => token.trim());
  return (
    method === 'GET' &&
    path === wsPath &&
    (headers.get('upgrade') ?? '').toLowerCase() === 'websocket' &&
    connection.includes('upgrade') &&
    /^[A-Za-z0-9+/]{22}==$/.test(headers.get('sec-websocket-key') ?? '') &&
    headers.get('sec-websocket-version') === '13'
  );
}

/** HEAD answers, 1xx, 204 and 304 never carry content (RFC 9110 §6.4.1). */
export function answerHasContent(method: string, status: number): boolean {
  return method !== 'HEAD' && status >= 200 && status !== 204 && status !== 304;
}

/** 1xx, 204 (and 304, whose length is the GET's) carry no Content-Length of their own. */
export function answerHasLength(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}
