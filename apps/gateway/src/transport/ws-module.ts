/**
 * The `ws` package, typed locally: @types/ws is not installed in this repo, and an ambient
 * `declare module 'ws'` could clash with another package's. Only what we use is declared.
 */
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** The net.Socket under a server-side ws socket: corked to write a turn's frames at once (turn-writes.ts). */
export interface WsNetSocket {
  cork(): void;
  uncork(): void;
  readonly writableLength: number;
}

export interface WsSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  /** ws's own field (ws 8), set before the upgrade callback runs. */
  readonly _socket: WsNetSocket;
  send(data: string, cb?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  ping(): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'pong', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
}

export interface WsServer {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, cb: (ws: WsSocket) => void): void;
  close(cb?: (err?: Error) => void): void;
}

export interface WsServerOptions {
  noServer: true;
  maxPayload: number;
  perMessageDeflate: boolean;
  clientTracking: boolean;
}

export interface WsClientOptions {
  headers?: Record<string, string>;
  maxPayload?: number;
  /** Answer pings automatically (default true). */
  autoPong?: boolean;
}

/** The client side, as the tests and tools use it. */
export interface WsClient {
  readonly readyState: number;
  send(data: string | Buffer, cb?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'open', listener: () => void): this;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'unexpected-response', listener: (req: unknown, res: IncomingMessage) => void): this;
  once(event: 'open', listener: () => void): this;
  once(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  once(event: 'error', listener: (err: Error) => void): this;
  pause(): void;
  resume(): void;
}

export interface WsModule {
  WebSocketServer: new (options: WsServerOptions) => WsServer;
  WebSocket: new (url: string, options?: WsClientOptions) => WsClient;
}

const require = createRequire(import.meta.url);

export function loadWs(): WsModule {
  return require('ws') as WsModule;
}

/** Whether ws masks and unmasks frames in C++: bufferutil is optional to it, so say which. */
export function wsHasNativeHelpers(): boolean {
  try {
    require('bufferutil');
    return true;
  } catch {
    return false;
  }
}
