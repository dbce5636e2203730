/**
 * The clients' history, taken at the wire: a WebSocket constructor for the SDK (its
 * `WebSocket` option) that records every request frame when it leaves (call time), its reply
 * when it arrives (return time), every push as it arrives, and requests left unanswered when
 * the socket closes (return: none). Recording at the socket makes every call's interval
 * contain the server's handling of it, which is all the linearizability check needs.
 *
 * Each new socket goes to the next gateway of the list (a client whose gateway died
 * reconnects through another one).
 */
import WebSocket from 'ws';
import type { WebSocketConstructor, WebSocketLike } from '@seqline/client';
import { now, type HistoryWriter } from './history.ts';

let nextSock = 1;

interface Pending {
  op: string;
  call: number;
  args: Record<string, unknown>;
}

export interface TapOptions {
  history: HistoryWriter;
  /** `user/device`. */
  dev: string;
  user: string;
  /** Gateway base URLs (`ws://host:port`), tried in turn, one per new socket. */
  gateways: () => string[];
  /** Told of every answered op (the nemesis arms faults on some). */
  onReply?: (op: string, args: Record<string, unknown>, res: Record<string, unknown>) => void;
}

function text(data: unknown): string | null {
  if (typeof data === 'string') return data;
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return null;
}

/** A WebSocket constructor that records for one device. */
export function tappedWebSocket(o: TapOptions): WebSocketConstructor {
  let turn = 0;
  return class TappedSocket implements WebSocketLike {
    private readonly inner: WebSocket;
    private readonly sock = nextSock++;
    private readonly pending = new Map<number, Pending>();
    onopen: ((ev: never) => void) | null = null;
    onmessage: ((ev: never) => void) | null = null;
    onclose: ((ev: never) => void) | null = null;
    onerror: ((ev: never) => void) | null = null;

    constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
      const list = o.gateways();
      const base = list[turn++ % list.length] ?? url;
      const target = new URL(url);
      const via = new URL(base);
      target.host = via.host;
      this.inner = new WebSocket(target.toString(), protocols, options);
      this.inner.onopen = (ev) => (this.onopen as ((e: unknown) => void) | null)?.(ev);
      this.inner.onerror = (ev) => (this.onerror as ((e: unknown) => void) | null)?.(ev);
      this.inner.onclose = (ev) => {
        this.abandon();
        (this.onclose as ((e: unknown) => void) | null)?.(ev);
      };
      this.inner.onmessage = (ev) => {
        this.record(ev.data);
        (this.onmessage as ((e: unknown) => void) | null)?.(ev);
      };
    }

    get readyState(): number {
      return this.inner.readyState;
    }

    send(data: string): void {
      try {
        const frame = JSON.parse(data) as { id?: unknown; op?: unknown } & Record<string, unknown>;
        if (typeof frame.id === 'number' && typeof frame.op === 'string') {
          const { id: _id, op, ...args } = frame;
          this.pending.set(frame.id, { op, call: now(), args });
        }
      } catch {
        // not JSON: not a request the history knows
      }
      this.inner.send(data);
    }

    close(code?: number, reason?: string): void {
      this.inner.close(code, reason);
    }

    terminate(): void {
      this.inner.terminate();
    }

    private record(data: unknown): void {
      const t = now();
      const raw = text(data);
      if (raw === null) return;
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return;
      }
      if (frame.op === 'push' || frame.op === 'group.push' || frame.op === 'kicked') {
        o.history.write({ t: 'push', dev: o.dev, user: o.user, sock: this.sock, at: t, frame });
        return;
      }
      if (typeof frame.id !== 'number') return;
      const p = this.pending.get(frame.id);
      if (!p) return;
      this.pending.delete(frame.id);
      const { id: _id, ...res } = frame;
      o.history.write({ t: 'op', dev: o.dev, user: o.user, sock: this.sock, op: p.op, call: p.call, ret: t, args: p.args, res });
      o.onReply?.(p.op, p.args, res);
    }

    /** The socket closed: what it never answered is recorded with no return. */
    private abandon(): void {
      for (const p of this.pending.values()) {
        o.history.write({ t: 'op', dev: o.dev, user: o.user, sock: this.sock, op: p.op, call: p.call, ret: null, args: p.args, res: null });
      }
      this.pending.clear();
    }
  };
}
