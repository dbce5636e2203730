/** Test harness: an in-process embedded server and a raw protocol client over a real WebSocket. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Clock } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import WebSocket from 'ws';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '../src/index.ts';

const CONNECT_TIMEOUT_MS = 5_000;
const CALL_TIMEOUT_MS = 30_000;

export const SECRET = 'test-secret-0123456789abcdef';

export class MutableClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
}

export interface TestServer extends RunningServer {
  dataDir: string;
  clock: MutableClock;
  url: string;
  stop(): Promise<void>;
}

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'seqline-e2e-'));
  const clock = new MutableClock();
  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: dataDir,
    SEQLINE_SECRET: SECRET,
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
    ...env,
  });
  const server = await startEmbeddedServer(config, silentLogger, clock);
  return {
    ...server,
    dataDir,
    clock,
    url: `ws://127.0.0.1:${server.port}/v1/ws`,
    async stop() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface WireEntry {
  seq: number;
  kind: string;
  appinfo: string;
  conv: { type: string; id: string };
  from: string;
  sendTime: number;
  type?: string;
  body?: unknown;
  referSeq?: number;
  readBy?: string[];
  recall?: { appinfo: string; sendTime: number };
}
export interface Push {
  op: 'push';
  prevSeq: number;
  entries: WireEntry[];
}
export interface GroupPush {
  op: 'group.push';
  group: string;
  prevGseq: number;
  messages: Array<WireEntry & { gseq: number }>;
}
export type Reply =
  { id: number | null; ok: true; [k: string]: unknown } | { id: number | null; ok: false; error: { code: string; message: string } };

export class TestClient {
  readonly pushes: Push[] = [];
  readonly groupPushes: GroupPush[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (r: Reply) => void>();
  readonly unmatched: Reply[] = [];
  private constructor(
    readonly ws: WebSocket,
    readonly user: string,
  ) {
    ws.on('message', (data: WebSocket.RawData) => {
      const msg = JSON.parse(String(data)) as Record<string, unknown>;
      if (msg.op === 'push') {
        this.pushes.push(msg as unknown as Push);
        return;
      }
      if (msg.op === 'group.push') {
        this.groupPushes.push(msg as unknown as GroupPush);
        return;
      }
      const reply = msg as unknown as Reply;
      const resolve = typeof reply.id === 'number' ? this.waiting.get(reply.id) : undefined;
      if (resolve && typeof reply.id === 'number') {
        this.waiting.delete(reply.id);
        resolve(reply);
      } else this.unmatched.push(reply);
    });
  }

  static async connect(url: string, user: string, tenant = 'default'): Promise<TestClient> {
    const token = await issueToken({ secret: SECRET, user, tenant, ttlSeconds: 3600 });
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    // A server killed mid-handshake can close the socket without an 'error': never wait forever.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`connect to ${url} timed out`));
      }, CONNECT_TIMEOUT_MS);
      ws.once('open', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      ws.once('close', () => {
        clearTimeout(timer);
        reject(new Error(`connection to ${url} closed during the handshake`));
      });
    });
    return new TestClient(ws, user);
  }

  /**
   * Sends a request and resolves with its reply. A reply that never comes resolves after
   * CALL_TIMEOUT_MS as an error reply naming the op (a hang then fails the test where it
   * happened instead of at the test's timeout; resolving, not rejecting, keeps raced calls
   * from becoming unhandled rejections).
   */
  call(op: string, args: Record<string, unknown> = {}): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({
          id,
          ok: false,
          error: { code: 'TEST_NO_REPLY', message: `no reply to ${op} (id ${id}) from ${this.user} within ${CALL_TIMEOUT_MS} ms` },
        });
      }, CALL_TIMEOUT_MS);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.ws.send(JSON.stringify({ id, op, ...args }));
    });
  }

  /** Calls and expects ok; returns the result fields. */
  async ok<T = Record<string, unknown>>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const r = await this.call(op, args);
    if (!r.ok) throw new Error(`${op} failed: ${r.error.code} ${r.error.message}`);
    return r as unknown as T;
  }

  sendRaw(data: string): void {
    this.ws.send(data);
  }

  /** Every entry of the inbox after `after`, paging sync. */
  async syncAll(after = 0, limit = 1000): Promise<WireEntry[]> {
    const out: WireEntry[] = [];
    let maxSeq = after;
    for (;;) {
      const r = await this.ok<{ entries: WireEntry[]; hasMore: boolean }>('sync', { maxSeq, limit });
      out.push(...r.entries);
      maxSeq = r.entries.at(-1)?.seq ?? maxSeq;
      if (!r.hasMore) return out;
    }
  }

  close(): void {
    this.ws.close();
  }
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let counter = 0;
export function appinfo(): string {
  counter += 1;
  return `app-${process.pid}-${Date.now()}-${counter}`;
}
