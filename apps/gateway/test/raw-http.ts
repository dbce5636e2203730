/**
 * HTTP over a bare node:net socket: sends exact bytes (duplicate headers, pipelined requests,
 * conflicting framing) and parses the exact bytes that come back, the way a keep-alive proxy
 * would — so a body where none belongs shows up as a broken next response or as `rest`.
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  /** Header lines as sent (names lower-cased), in order. */
  lines: Array<[string, string]>;
  header(name: string): string | undefined;
  body: string;
}

export interface Exchange {
  responses: RawResponse[];
  /** Bytes after the last complete response (must be '' on a well-framed connection). */
  rest: string;
  /** The server closed (or reset) the connection within the wait. */
  closed: boolean;
}

export interface ExchangeOptions {
  /** Resolve once this many responses are complete (and nothing more came for `quietMs`). */
  responses?: number;
  /** Which responses (by index) answer HEAD requests: they have no body whatever they say. */
  head?: number[];
  /** How long the line must stay silent before we conclude nothing more is coming. */
  quietMs?: number;
  /** Written one after another, with a pause between (to split a request across packets). */
  pauseMs?: number;
}

export function exchange(port: number, data: string | string[], options: ExchangeOptions = {}): Promise<Exchange> {
  const chunks = typeof data === 'string' ? [data] : data;
  const quietMs = options.quietMs ?? 250;
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const parsed = parseResponses(received.toString('latin1'), new Set(options.head ?? []));
      resolve({ ...parsed, closed });
    };
    const settle = () => {
      clearTimeout(timer);
      const complete = parseResponses(received.toString('latin1'), new Set(options.head ?? [])).responses.length;
      timer = setTimeout(finish, complete >= (options.responses ?? 0) ? quietMs : 3000);
    };
    socket.on('connect', async () => {
      for (const [i, chunk] of chunks.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, options.pauseMs ?? 30));
        if (!socket.destroyed) socket.write(Buffer.from(chunk, 'latin1'));
      }
      settle();
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      settle();
    });
    const ended = () => {
      closed = true;
      finish();
    };
    socket.on('end', ended);
    socket.on('error', ended);
  });
}

/** Splits a byte stream into responses, framing bodies as a client must (RFC 9112 §6.3). */
export function parseResponses(text: string, head: ReadonlySet<number>): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine = '', ...headerLines] = rest.slice(0, end).split('\r\n');
    const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
    if (!match) break;
    const status = Number(match[1]);
    const lines = headerLines.map((line): [string, string] => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    });
    const header = (name: string) => lines.find(([n]) => n === name)?.[1];
    const afterHead = rest.slice(end + 4);
    let body = '';
    let consumed = 0;
    if (!head.has(responses.length) && status >= 200 && status !== 204 && status !== 304) {
      const length = header('content-length');
      if (length === undefined) break; // would be read to the close: not a framing this gateway uses
      if (afterHead.length < Number(length)) break;
      body = afterHead.slice(0, Number(length));
      consumed = Number(length);
    }
    responses.push({ status, lines, header, body });
    rest = afterHead.slice(consumed);
  }
  return { responses, rest };
}

/** A request in bytes; `headers` may repeat a name. Host is added unless given. */
export function request(method: string, target: string, headers: Array<[string, string]> = [], body = ''): string {
  const all: Array<[string, string]> = headers.some(([n]) => n.toLowerCase() === 'host') ? headers : [['Host', 'gateway.test'], ...headers];
  return `${method} ${target} HTTP/1.1\r\n${all.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n${body}`;
}

/** Handshake headers of a valid WebSocket upgrade (RFC 6455 §4.1). */
export const HANDSHAKE: Array<[string, string]> = [
  ['Connection', 'Upgrade'],
  ['Upgrade', 'websocket'],
  ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
  ['Sec-WebSocket-Version', '13'],
];

/** Status, headers and body with what differs by design between servers (Date, server name, keep-alive) left out. */
export function normalise(response: RawResponse): string {
  const skip = new Set(['date', 'uwebsockets', 'connection', 'keep-alive']);
  const lines = response.lines
    .filter(([n]) => !skip.has(n))
    .map(([n, v]) => `${n}: ${v}`)
    .sort();
  return [response.status, ...lines, response.body].join('\n');
}
