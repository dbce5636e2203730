/**
 * The WebSocket surface the SDK uses: the browser API (also the `ws` package's). Only the
 * `ws` package can set an Authorization header; with a browser WebSocket the token goes in
 * the `token` query parameter (PROTOCOL.md).
 */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
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

/** Global WebSocket when the runtime has one, else the `ws` package (Node 20). */
export async function defaultWebSocket(): Promise<{ ctor: WebSocketConstructor; transport: TokenTransport }> {
  const globalCtor = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (globalCtor) return { ctor: globalCtor, transport: 'query' };
  // Through a variable so bundlers for browsers do not try to include `ws`.
  const name = 'ws';
  const mod = (await import(name)) as { WebSocket?: WebSocketConstructor; default?: WebSocketConstructor };
  const ctor = mod.WebSocket ?? mod.default;
  if (!ctor) throw new Error('no global WebSocket and the ws package could not be loaded');
  return { ctor, transport: 'header' };
}

/** `ws://host:port` → `ws://host:port/v1/ws`; a URL that already has a path is kept. */
export function socketUrl(base: string, token: string | null): string {
  const url = new URL(base);
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/v1/ws';
  if (token !== null) url.searchParams.set('token', token);
  return url.toString();
}

/** Text of a message event: string for browsers and `ws` text frames; bytes decoded as UTF-8. */
export function frameText(data: unknown): string | null {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return null;
}
