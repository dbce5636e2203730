/** Starts a gateway over FakeMessaging and talks to it with real sockets (the `ws` client, node:http). */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { Logger } from '@seqline/core';
import {
  createGateway,
  createTokenVerifier,
  issueToken,
  loadNativeUws,
  type Gateway,
  type GatewayOptions,
  type TransportName,
} from '../src/index.ts';
import { loadWs, type WsClient } from '../src/transport/ws-module.ts';
import { FakeMessaging } from './fake-messaging.ts';

export const SECRET = 'gateway-test-secret-0123456789abcdef';
/**
 * Whether the native uWS binary loads on this Node (the Truffle build has binaries up to Node 20).
 * Where it does not, the uWS variants of the suites are left out and say so; .ci/run runs the
 * gateway suites on Node 20 too, so both transports are tested in CI.
 */
export const UWS_LOADS = loadNativeUws().ok;
if (!UWS_LOADS) console.log(`gateway tests: no native uWebSockets.js binary for Node ${process.version}; uWS variants skipped (ws runs)`);
export const TRANSPORTS: TransportName[] = UWS_LOADS ? ['uws', 'ws'] : ['ws'];

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string | undefined;
  obj: Record<string, unknown>;
}

export function memoryLogger(records: LogRecord[] = [], bindings: object = {}): Logger & { records: LogRecord[] } {
  const at = (level: LogRecord['level']) => (obj: object, msg?: string) => {
    records.push({ level, msg, obj: { ...bindings, ...obj } });
  };
  return {
    records,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more: object) => memoryLogger(records, { ...bindings, ...more }),
  };
}

export interface Started {
  gateway: Gateway;
  messaging: FakeMessaging;
  logger: ReturnType<typeof memoryLogger>;
  wsUrl(query?: string): string;
  httpUrl(path: string): string;
  token(user?: string, tenant?: string): Promise<string>;
  connect(user?: string, tenant?: string): Promise<TestClient>;
}

export async function startGateway(transport: TransportName, options: Partial<GatewayOptions> = {}): Promise<Started> {
  const messaging = new FakeMessaging();
  const logger = memoryLogger();
  const gateway = await createGateway({
    port: 0,
    host: '127.0.0.1',
    transport,
    messaging,
    logger,
    verifyToken: createTokenVerifier(SECRET),
    ...options,
  });
  const base = `127.0.0.1:${gateway.port}`;
  const token = (user = 'alice', tenant = 't1') => issueToken({ secret: SECRET, user, tenant, ttlSeconds: 600 });
  return {
    gateway,
    messaging,
    logger,
    token,
    wsUrl: (query) => `ws://${base}/v1/ws${query ? `?${query}` : ''}`,
    httpUrl: (path) => `http://${base}${path}`,
    connect: async (user, tenant) => TestClient.connect(`ws://${base}/v1/ws`, { authorization: `Bearer ${await token(user, tenant)}` }),
  };
}

// ---------------------------------------------------------------- WebSocket client

export type Frame = Record<string, unknown> & { id?: number | null; ok?: boolean; op?: string; error?: { code: string; message: string } };

export class TestClient {
  private readonly buffer: Frame[] = [];
  private readonly waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  private nextId = 1;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly socket: WsClient) {
    socket.on('message', (data) => this.deliver(JSON.parse(data.toString()) as Frame));
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<TestClient> {
    const { WebSocket } = loadWs();
    const socket = new WebSocket(url, { headers, maxPayload: 64 * 1024 * 1024 });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new TestClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends `{id, op, ...args}` and resolves with the reply carrying that id. */
  request(op: string, args: Record<string, unknown> = {}): Promise<Frame> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, op, ...args }));
    return this.waitFor((f) => f.id === id && f.op === undefined);
  }

  sendRaw(data: string | Buffer): void {
    this.socket.send(data);
  }

  nextPush(): Promise<Frame> {
    return this.waitFor((f) => f.op === 'push');
  }

  /** The next reply with this id (null for frames the server could not attribute). */
  nextReply(id: number | null): Promise<Frame> {
    return this.waitFor((f) => f.op === undefined && f.id === id);
  }

  close(): Promise<{ code: number; reason: string }> {
    this.socket.close(1000, 'bye');
    return this.closed;
  }

  private waitFor(match: (f: Frame) => boolean): Promise<Frame> {
    const i = this.buffer.findIndex(match);
    if (i >= 0) return Promise.resolve(this.buffer.splice(i, 1)[0] as Frame);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  private deliver(frame: Frame): void {
    const i = this.waiters.findIndex((w) => w.match(frame));
    if (i < 0) return void this.buffer.push(frame);
    const [waiter] = this.waiters.splice(i, 1);
    waiter?.resolve(frame);
  }
}

// ---------------------------------------------------------------- raw HTTP

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request (a fresh connection each time, so no keep-alive outlives a test). */
export function http(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Attempts a WebSocket upgrade and reports the HTTP status (101 when accepted). */
export function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url.replace(/^ws/, 'http'), {
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `check` is true (or fails after `timeoutMs`). */
export async function eventually(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await delay(10);
  }
}
