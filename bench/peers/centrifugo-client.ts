/**
 * A lean Centrifugo client: protocol v2 in JSON over WebSocket (github.com/centrifugal/protocol,
 * client.proto). Commands `{id, connect|subscribe|publish: {...}}`; replies carry the same id;
 * pushes have none. One WebSocket message may carry several replies, one per line. An empty
 * object `{}` from the server is a ping, answered with `{}` when the connect result asks for pongs.
 */
import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { MESSAGE_TEXT } from '../fixtures.ts';
import { closeSocket } from '../ws-client.ts';
import type { PeerClient, Sent } from './system.ts';

export interface CentrifugoPublication {
  data?: { id?: string };
  offset?: number;
}

export interface SubscribeResult {
  recoverable?: boolean;
  epoch?: string;
  offset?: number;
  recovered?: boolean;
  publications?: CentrifugoPublication[];
}

export interface ConnectResult {
  client: string;
  pong?: boolean;
  subs?: Record<string, SubscribeResult>;
}

interface Reply {
  id?: number;
  error?: { code: number; message: string };
  connect?: ConnectResult;
  subscribe?: SubscribeResult;
  push?: { channel?: string; pub?: CentrifugoPublication };
}

/** An HS256 connection token (`sub` = user), as Centrifugo's `client.token.hmac_secret_key` verifies. */
export function centrifugoToken(secret: string, user: string, ttlSeconds = 3600): string {
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: user, exp: Math.floor(Date.now() / 1000) + ttlSeconds })}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

export class CentrifugoClient implements PeerClient {
  onMessage: ((id: string | undefined, at: number) => void) | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: { reply: Reply; at: number }) => void; reject: (err: Error) => void }>();
  private pong = false;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => {
      const at = performance.now();
      const text = Buffer.isBuffer(data) ? data.toString() : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString();
      for (const line of text.split('\n')) if (line.length > 0) this.onReply(JSON.parse(line) as Reply, at);
    });
    ws.on('error', () => {}); // a lost socket shows in isOpen and in the waiters' rejections
    ws.on('close', (code: number, reason: Buffer) => {
      const err = new Error(`centrifugo socket closed (${code} ${String(reason)})`);
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    });
  }

  /** Opens the socket and sends `connect`; `subs` asks to recover server-side subscriptions. */
  static async connect(
    url: string,
    token: string,
    subs?: Record<string, { recover: true; offset: number; epoch: string }>,
  ): Promise<{ client: CentrifugoClient; result: ConnectResult; at: number }> {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 15_000 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    });
    const client = new CentrifugoClient(ws);
    const { reply, at } = await client.command('connect', { token, name: 'seqline-bench', ...(subs ? { subs } : {}) }).reply;
    if (reply.error || !reply.connect) {
      await client.close();
      throw new Error(`centrifugo connect failed: ${JSON.stringify(reply.error ?? reply)}`);
    }
    client.pong = reply.connect.pong === true;
    return { client, result: reply.connect, at };
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(to: string, id: string): Sent {
    return this.publish(`personal:#${to}`, id);
  }

  sendToGroup(group: string, id: string): Sent {
    return this.publish(`group:${group}`, id);
  }

  async subscribe(channel: string): Promise<void> {
    const { reply } = await this.command('subscribe', { channel }).reply;
    if (reply.error) throw new Error(`subscribe ${channel}: ${reply.error.code} ${reply.error.message}`);
  }

  close(): Promise<void> {
    return closeSocket(this.ws);
  }

  /** The message body is the same shape and size as Seqline's bench messages. */
  private publish(channel: string, id: string): Sent {
    const { sentAt, reply } = this.command('publish', {
      channel,
      data: { id, type: 'text', body: { text: MESSAGE_TEXT } },
    });
    return { sentAt, ack: reply.then((r) => (r.reply.error ? `CENTRIFUGO_${r.reply.error.code}` : undefined)) };
  }

  private command(method: string, params: object): { sentAt: number; reply: Promise<{ reply: Reply; at: number }> } {
    const id = this.nextId++;
    const frame = JSON.stringify({ id, [method]: params });
    const sentAt = performance.now();
    if (this.ws.readyState !== WebSocket.OPEN) return { sentAt, reply: Promise.reject(new Error('centrifugo socket not open')) };
    const reply = new Promise<{ reply: Reply; at: number }>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.ws.send(frame);
    return { sentAt, reply };
  }

  private onReply(reply: Reply, at: number): void {
    if (reply.id !== undefined && reply.id > 0) {
      const waiter = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      waiter?.resolve({ reply, at });
      return;
    }
    if (reply.push?.pub) {
      this.onMessage?.(reply.push.pub.data?.id, at);
      return;
    }
    if (reply.push === undefined && this.pong && this.ws.readyState === WebSocket.OPEN) this.ws.send('{}'); // ping → pong
  }
}
