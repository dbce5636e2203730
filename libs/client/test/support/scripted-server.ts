/**
 * A small scripted Seqline server for the client tests, on the `ws` package: one user's inbox
 * as an array, `send` with appinfo dedup, `sync` paging, pushes with prevSeq, and knobs to
 * misbehave (drop / hang / fail replies, close mid-request, delay syncs, withhold pushes).
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Entry, GroupNews } from '../../src/index.ts';

interface WsPeer {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', fn: (data: Buffer, isBinary: boolean) => void): void;
  on(event: 'close', fn: () => void): void;
}

interface WsServer {
  on(event: 'connection', fn: (peer: WsPeer, req: IncomingMessage) => void): void;
  on(event: 'listening', fn: () => void): void;
  address(): AddressInfo;
  close(cb?: (err?: Error) => void): void;
  readonly clients: Set<WsPeer>;
}

type WsServerCtor = new (opts: {
  host: string;
  port: number;
  path: string;
  verifyClient: (info: { req: IncomingMessage }) => boolean;
}) => WsServer;

const wsName = 'ws';
const { WebSocketServer } = (await import(wsName)) as { WebSocketServer: WsServerCtor };

export type Frame = Record<string, unknown> & { id: number; op: string };

export interface Misbehaviour {
  /** Do not answer the next N requests of this op (but apply them). */
  dropReplies?: number;
  /** Never answer this op (and do not apply it). */
  hang?: boolean;
  /** Answer the next N requests of this op with this error code (without applying). */
  fail?: { code: string; count: number };
  /** Answer with this object (plus the id) instead of the real result. */
  reply?: Record<string, unknown>;
  /** Apply the next N requests of this op, then close the connection instead of replying. */
  closeAfterApply?: number;
}

export class ScriptedServer {
  readonly inbox: Entry[] = [];
  /** Every request received, in order. */
  readonly requests: Frame[] = [];
  readonly misbehave = new Map<string, Misbehaviour>();
  groups: GroupNews[] = [];
  validTokens = new Set(['good-token']);
  /** Push each appended entry to connected clients as it is stored. */
  autoPush = true;
  /** Delay before a sync reply is sent (computed when the request arrives). */
  syncDelayMs: () => number = () => 0;
  /** Gap between consecutive seqs (gaps are allowed by I1). */
  seqStep: () => number = () => 1;
  connections = 0;
  rejectedUpgrades = 0;
  private nextSeq = 0;

  private constructor(private readonly wss: WsServer) {
    wss.on('connection', (peer) => {
      this.connections += 1;
      peer.on('message', (data) => this.onMessage(peer, data.toString('utf8')));
    });
  }

  static async start(): Promise<ScriptedServer> {
    let server: ScriptedServer | null = null;
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      path: '/v1/ws',
      verifyClient: ({ req }) => server!.authorize(req),
    });
    server = new ScriptedServer(wss);
    await new Promise<void>((resolve) => wss.on('listening', resolve));
    return server;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.wss.address().port}`;
  }

  get headSeq(): number {
    return this.inbox[this.inbox.length - 1]?.seq ?? 0;
  }

  requestsOf(op: string): Frame[] {
    return this.requests.filter((r) => r.op === op);
  }

  /** Stores n messages from bob; returns them with the prevSeq a push of them would carry. */
  append(n: number): { prevSeq: number; entries: Entry[] } {
    const prevSeq = this.headSeq;
    const entries: Entry[] = [];
    for (let i = 0; i < n; i++) entries.push(this.store('bob', `in-${this.nextSeq + 1}`, 'user', 'bob', { i }));
    return { prevSeq, entries };
  }

  /** Sends a push frame to every connected client. */
  push(prevSeq: number, entries: Entry[]): void {
    const text = JSON.stringify({ op: 'push', prevSeq, entries });
    for (const peer of this.wss.clients) if (peer.readyState === 1) peer.send(text);
  }

  /** Sends raw text to every client (malformed-frame tests). */
  broadcastRaw(text: string): void {
    for (const peer of this.wss.clients) if (peer.readyState === 1) peer.send(text);
  }

  /** Drops every connection without a closing handshake. */
  kick(): void {
    for (const peer of this.wss.clients) peer.terminate();
  }

  close(): Promise<void> {
    this.kick();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }

  private authorize(req: IncomingMessage): boolean {
    const header = req.headers.authorization;
    const fromQuery = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
    const token = header?.startsWith('Bearer ') ? header.slice(7) : fromQuery;
    const ok = token !== null && this.validTokens.has(token);
    if (!ok) this.rejectedUpgrades += 1;
    return ok;
  }

  private store(from: string, appinfo: string, convType: 'user' | 'group', convId: string, body: object): Entry {
    this.nextSeq += Math.max(1, this.seqStep());
    const entry: Entry = {
      seq: this.nextSeq,
      kind: 'msg',
      appinfo,
      conv: { type: convType, id: convId },
      from,
      sendTime: 1_763_700_000_000 + this.nextSeq,
      type: 'text',
      body: body as Entry['body'],
    };
    this.inbox.push(entry);
    return entry;
  }

  private onMessage(peer: WsPeer, text: string): void {
    const frame = JSON.parse(text) as Frame;
    this.requests.push(frame);
    const mis = this.misbehave.get(frame.op) ?? {};
    if (mis.hang) return;
    if (mis.fail && mis.fail.count > 0) {
      mis.fail.count -= 1;
      peer.send(JSON.stringify({ id: frame.id, ok: false, error: { code: mis.fail.code, message: 'scripted' } }));
      return;
    }
    const result = this.apply(frame);
    if (mis.closeAfterApply && mis.closeAfterApply > 0) {
      mis.closeAfterApply -= 1;
      peer.terminate();
      return;
    }
    if (mis.dropReplies && mis.dropReplies > 0) {
      mis.dropReplies -= 1;
      return;
    }
    const reply = JSON.stringify({ ...(mis.reply ?? result), id: frame.id });
    const delay = frame.op === 'sync' ? this.syncDelayMs() : 0;
    if (delay > 0) setTimeout(() => peer.readyState === 1 && peer.send(reply), delay);
    else peer.send(reply);
  }

  private apply(frame: Frame): Record<string, unknown> {
    switch (frame.op) {
      case 'send': {
        const appinfo = String(frame['appinfo']);
        const existing = this.inbox.find((e) => e.appinfo === appinfo);
        if (existing) return { ok: true, seq: existing.seq, sendTime: existing.sendTime, duplicate: true };
        const to = frame['to'] as { user?: string; group?: string };
        const prevSeq = this.headSeq;
        const entry = this.store('alice', appinfo, to.user ? 'user' : 'group', to.user ?? to.group ?? '', frame['body'] as object);
        if (this.autoPush) this.push(prevSeq, [entry]);
        return { ok: true, seq: entry.seq, sendTime: entry.sendTime, duplicate: false };
      }
      case 'edit': {
        // Keyed by the client's editId, as the server does: a resend answers the stored seq.
        const appinfo = `edit:alice:${String(frame['editId'] ?? this.inbox.length)}`;
        const existing = this.inbox.find((e) => e.appinfo === appinfo);
        if (existing) return { ok: true, seq: existing.seq };
        const entry = this.store('alice', appinfo, 'user', 'bob', frame['body'] as object);
        return { ok: true, seq: entry.seq };
      }
      case 'sync': {
        const maxSeq = Number(frame['maxSeq']);
        const limit = Number(frame['limit'] ?? 200);
        const after = this.inbox.filter((e) => e.seq > maxSeq);
        const entries = after.slice(0, limit);
        return { ok: true, entries, headSeq: this.headSeq, hasMore: after.length > limit, groups: this.groups };
      }
      case 'group.create':
        return { ok: true, group: frame['group'] ?? 'g-generated', tier: 'small' };
      case 'group.add':
      case 'group.remove':
        return { ok: true, tier: 'small', memberCount: (frame['members'] as unknown[]).length + 1 };
      case 'group.info':
        return { ok: true, group: frame['group'], name: 'g', tier: 'small', memberCount: 3, fanout: 'write', headGseq: 0 };
      case 'group.history':
        return { ok: true, messages: [], hasMore: false };
      case 'group.ack':
        return { ok: true, cursor: frame['gseq'] };
      default:
        return { ok: false, error: { code: 'BAD_REQUEST', message: `unknown op ${frame.op}` } };
    }
  }
}
