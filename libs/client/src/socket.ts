import { SeqlineClientError } from './errors.ts';

/**
 * The WebSocket surface the SDK uses: the browser API (also Node ≥ 22's global and the `ws`
 * package's). A browser WebSocket cannot set headers: there the token travels in the `token`
 * query parameter (docs/protocol.md); `ws` can send `Authorization: Bearer`.
 */
export interface WebSocketLike {
  readonly readyState: number;
  // The SDK only assigns these. `never` parameters let every implementation's own event types
  // (the DOM's Event, ws's, undici's) fit; the SDK's handlers name the fields they read.
  onopen: ((ev: never) => void) | null;
  onmessage: ((ev: never) => void) | null;
  onclose: ((ev: never) => void) | null;
  onerror: ((ev: never) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** `ws` only: drop the TCP connection without a closing handshake. */
  terminate?: () => void;
}

export type WebSocketConstructor = new (
  url: string,
  protocols?: string | string[],
  options?: { headers?: Record<string, string> },
) => WebSocketLike;

export const OPEN = 1;

export type TokenTransport = 'header' | 'query';

export interface ResolvedWebSocket {
  ctor: WebSocketConstructor;
  transport: TokenTransport;
}

function globalWebSocket(): WebSocketConstructor | undefined {
  return (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
}

/** Node, Bun and Deno report a Node version; browsers and their workers do not. */
function runsOnNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof proc?.versions?.node === 'string';
}

/**
 * The constructor and token transport to use. A given constructor wins; otherwise the global
 * WebSocket (browsers, Node ≥ 22); otherwise, on Node 20, the optional peer `ws`. The token
 * goes in a header only where that can work: a given non-global constructor (or `ws`) on Node.
 */
export async function resolveWebSocket(given?: WebSocketConstructor, transport?: TokenTransport): Promise<ResolvedWebSocket> {
  const globalCtor = globalWebSocket();
  if (given) {
    const canSetHeaders = given !== globalCtor && runsOnNode();
    return { ctor: given, transport: transport ?? (canSetHeaders ? 'header' : 'query') };
  }
  if (globalCtor) return { ctor: globalCtor, transport: transport ?? 'query' };
  return { ctor: await importWs(), transport: transport ?? 'header' };
}

/**
 * `ws` is an optional peer, loaded only where there is no global WebSocket (Node 20). The
 * specifier is a variable and the import is marked ignorable so browser bundlers neither
 * include `ws` nor warn about it; browsers never reach this line.
 */
async function importWs(): Promise<WebSocketConstructor> {
  const name = 'ws';
  let mod: { WebSocket?: WebSocketConstructor; default?: WebSocketConstructor };
  try {
    mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as typeof mod;
  } catch (err) {
    throw new SeqlineClientError(
      'CONFIG',
      'no WebSocket: this runtime has no global WebSocket (Node < 22) and the ws package is not installed; ' +
        'install ws or pass the WebSocket option',
      { cause: err },
    );
  }
  const ctor = mod.WebSocket ?? mod.default;
  if (!ctor) throw new SeqlineClientError('CONFIG', 'the ws package has no WebSocket export');
  return ctor;
}

/** `ws://host:port` → `ws://host:port/v1/ws`; a URL that already has a path is kept. */
export function socketUrl(base: string, token: string | null, device: { dev?: string; plat?: string } = {}): string {
  const url = new URL(base);
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/v1/ws';
  if (token !== null) url.searchParams.set('token', token);
  // The device, for the login policy; a token that names one must agree (else 401).
  if (device.dev !== undefined) url.searchParams.set('dev', device.dev);
  if (device.plat !== undefined) url.searchParams.set('plat', device.plat);
  return url.toString();
}

/** Text of a message event: string for browsers and `ws` text frames; bytes decoded as UTF-8. */
export function frameText(data: unknown): string | null {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return null;
}
