/** A lean protocol client for the benches: request/reply by id, pushes to a callback, arrival times. */
import { performance } from 'node:perf_hooks';
import { issueToken } from '@seqline/protocol';
import WebSocket from 'ws';
import { BENCH_SECRET } from './support.ts';

export interface WireEntryLite {
  seq: number;
  appinfo: string;
  conv: { type: string; id: string };
  from: string;
}

export interface PushFrame {
  op: 'push';
  prevSeq: number;
  entries: WireEntryLite[];
}

export interface ReplyFrame {
  id: number | null;
  ok: boolean;
  error?: { code: string; message: string };
  [field: string]: unknown;
}

export interface TimedReply {
  reply: ReplyFrame;
  /** performance.now() when the frame arrived (before parsing). */
  at: number;
  /** Length of the frame text. */
  bytes: number;
  text: string;
}

export function tokenFor(user: string): Promise<string> {
  return issueToken({ secret: BENCH_SECRET, user, tenant: 'default', ttlSeconds: 3600 });
}

export class BenchClient {
  /** Called with every push and the time its frame arrived. */
  onPush: ((push: PushFrame, at: number) => void) | undefined;
  /** `group.push` frames (read-fanout groups): how many messages each carried. */
  onGroupPush: ((messages: number, at: number) => void) | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: TimedReply) => void; reject: (err: Error) => void }>();
  /** How the socket closed, if it did (a load run reports sockets lost under it). */
  closedWith: { code: number; reason: string; error?: string; at: number } | undefined;
  /** performance.now() when the socket opened (a lost socket's report says how long it lived). */
  readonly openedAt = performance.now();
  private lastError: string | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => {
      const at = performance.now();
      const text = Buffer.isBuffer(data) ? data.toString() : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString();
      const frame = JSON.parse(text) as { op?: unknown };
      if (frame.op === 'push') {
        this.onPush?.(frame as PushFrame, at);
        return;
      }
      if (frame.op === 'group.push') {
        const messages = (frame as { messages?: unknown }).messages;
        this.onGroupPush?.(Array.isArray(messages) ? messages.length : 0, at);
        return;
      }
      const reply = frame as ReplyFrame;
      const waiter = typeof reply.id === 'number' ? this.waiting.get(reply.id) : undefined;
      if (waiter && typeof reply.id === 'number') {
        this.waiting.delete(reply.id);
        waiter.resolve({ reply, at, bytes: text.length, text });
      }
    });
    // A bench socket that errors is counted by whoever checks isOpen; never crash the run.
    ws.on('error', (err) => {
      this.lastError = err.message;
    });
    // A request on a lost socket fails instead of waiting forever.
    ws.on('close', (code: number, reason: Buffer) => {
      this.closedWith = { code, reason: String(reason), at: performance.now(), ...(this.lastError ? { error: this.lastError } : {}) };
      const err = new Error(`socket closed (${code} ${String(reason)}${this.lastError ? `; ${this.lastError}` : ''})`);
      for (const waiter of this.waiting.values()) waiter.reject(err);
      this.waiting.clear();
    });
  }

  /** Opens a socket; `token` goes in the Authorization header (the raw server takes none). */
  static async connect(url: string, token?: string): Promise<BenchClient> {
    const ws = new WebSocket(url, {
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    });
    return new BenchClient(ws);
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Writes the request frame now; resolves with the reply. `sentAt` is taken right before the write. */
  call(op: string, args: Record<string, unknown> = {}): { sentAt: number; reply: Promise<TimedReply> } {
    const id = this.nextId++;
    const frame = JSON.stringify({ id, op, ...args });
    const sentAt = performance.now();
    if (this.ws.readyState !== WebSocket.OPEN) {
      return { sentAt, reply: Promise.reject(new Error(`socket not open (${JSON.stringify(this.closedWith)})`)) };
    }
    const reply = new Promise<TimedReply>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.ws.send(frame);
    return { sentAt, reply };
  }

  /** call() that fails the bench on an error reply (a broken setup, not a figure). */
  async ok(op: string, args: Record<string, unknown> = {}): Promise<TimedReply> {
    const r = await this.call(op, args).reply;
    if (!r.reply.ok) throw new Error(`${op} failed: ${r.reply.error?.code} ${r.reply.error?.message}`);
    return r;
  }

  /** Requests still waiting for a reply. */
  get pending(): number {
    return this.waiting.size;
  }

  close(): Promise<void> {
    return closeSocket(this.ws);
  }
}

/** Closes `ws` and waits for the close handshake; a peer that does not answer within 2 s is cut off. */
export function closeSocket(ws: WebSocket): Promise<void> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      ws.terminate();
      resolve();
    }, 2000);
    ws.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    ws.close();
  });
}
