import { backoffDelay, type BackoffOptions } from './backoff.ts';
import { SeqlineClientError } from './errors.ts';
import type { ClientLogger } from './logger.ts';
import {
  frameText,
  OPEN,
  resolveWebSocket,
  socketUrl,
  type ResolvedWebSocket,
  type TokenTransport,
  type WebSocketConstructor,
  type WebSocketLike,
} from './socket.ts';
import { KICKED_CLOSE_CODE, type KickedBy } from './kicked.ts';
import { parseServerFrame, type GroupPushFrame, type Obj, type PushFrame } from './wire.ts';

export interface ConnectionOptions {
  url: string;
  token: string | (() => Promise<string>);
  WebSocket?: WebSocketConstructor;
  tokenTransport?: TokenTransport;
  /** Named in the socket URL (`dev`, `plat`) for the tenant's login policy. */
  device?: { dev?: string; plat?: string };
  reconnectBackoff: BackoffOptions;
  /** A socket not open after this long is abandoned and retried. */
  connectTimeoutMs: number;
  /** Consecutive timeouts with no frame at all from the server before the socket is dropped. */
  silentTimeoutsBeforeReconnect: number;
  logger: ClientLogger;
  onOpen(): void;
  onClose(info: { code: number; reason: string }): void;
  onPush(push: PushFrame): void;
  onGroupPush?(push: GroupPushFrame): void;
  /** A newer login replaced this session (`kicked` frame or close 4409): the connection stops for good. */
  onKicked?(by: KickedBy): void;
}

interface InFlight {
  resolve(result: Obj): void;
  reject(err: SeqlineClientError): void;
  timer: ReturnType<typeof setTimeout>;
  /** Frames received before this request was sent: unchanged at its timeout means silence. */
  framesBefore: number;
}

interface OpenWaiter {
  opened(): void;
  stopped(err: SeqlineClientError): void;
}

/**
 * One logical connection to the gateway: opens the socket, keeps it open (reconnects with
 * capped exponential backoff), correlates replies to requests by id, and hands pushes on.
 */
export class Connection {
  private socket: WebSocketLike | null = null;
  private nextId = 1;
  private readonly inFlight = new Map<number, InFlight>();
  private readonly openWaiters = new Set<OpenWaiter>();
  private started = false;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private framesReceived = 0;
  private silentTimeouts = 0;
  private resolved: ResolvedWebSocket | null = null;
  private kickedBy: KickedBy | null = null;

  constructor(private readonly opts: ConnectionOptions) {}

  get isOpen(): boolean {
    return this.socket !== null && this.socket.readyState === OPEN;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Picks the WebSocket implementation; rejects with CONFIG when the runtime has none. */
  async prepare(): Promise<void> {
    this.resolved ??= await resolveWebSocket(this.opts.WebSocket, this.opts.tokenTransport);
  }

  /** Starts connecting (once); resolves at the next open, rejects with CLOSED if stopped first. */
  start(): Promise<void> {
    if (this.stopped) return Promise.reject(closedError());
    const opened = this.isOpen ? Promise.resolve() : this.waitOpen();
    if (!this.started) {
      this.started = true;
      void this.openSocket();
    }
    return opened;
  }

  /** The connection served a request: the next drop starts backing off from the beginning. */
  markHealthy(): void {
    this.attempt = 0;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.failInFlight(closedError());
    for (const w of this.openWaiters) w.stopped(closedError());
    this.openWaiters.clear();
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, 'client closed');
  }

  /** Forces a new socket (e.g. the app knows the network changed). */
  drop(reason: string): void {
    const socket = this.socket;
    if (!socket) return;
    this.opts.logger.warn({ reason }, 'seqline: dropping connection');
    if (socket.terminate) socket.terminate();
    else socket.close(4000, reason.slice(0, 100));
  }

  /**
   * Sends `{id, op, ...args}` and resolves with the reply's result. While disconnected the
   * request waits for the next open; the timeout covers the wait and the round trip.
   */
  request(op: string, args: object, timeoutMs: number): Promise<Obj> {
    if (this.stopped) return Promise.reject(closedError());
    if (Object.hasOwn(args, 'id') || Object.hasOwn(args, 'op')) {
      // They would be overwritten by the frame's own: fail loudly instead of sending nonsense.
      return Promise.reject(new SeqlineClientError('BAD_REQUEST', `${op}: arguments must not be named id or op`));
    }
    return new Promise<Obj>((resolve, reject) => {
      let id: number | null = null;
      const waiter: OpenWaiter = { opened: () => send(), stopped: (err) => fail(err) };
      const timer = setTimeout(() => {
        if (id === null) {
          this.openWaiters.delete(waiter);
          reject(new SeqlineClientError('DISCONNECTED', `${op}: not connected within ${timeoutMs} ms`));
          return;
        }
        const entry = this.inFlight.get(id);
        this.inFlight.delete(id);
        if (entry && this.framesReceived === entry.framesBefore) this.noteSilentTimeout();
        reject(new SeqlineClientError('TIMEOUT', `${op}: no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      const fail = (err: SeqlineClientError): void => {
        clearTimeout(timer);
        reject(err);
      };
      const send = (): void => {
        const socket = this.socket;
        if (!socket || socket.readyState !== OPEN) {
          this.openWaiters.add(waiter);
          return;
        }
        id = this.nextId++;
        this.inFlight.set(id, { resolve, reject, timer, framesBefore: this.framesReceived });
        try {
          socket.send(JSON.stringify({ ...args, id, op }));
        } catch (err) {
          this.inFlight.delete(id);
          fail(new SeqlineClientError('DISCONNECTED', `${op}: send failed`, { cause: err }));
        }
      };
      send();
    });
  }

  private waitOpen(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.openWaiters.add({ opened: resolve, stopped: reject });
    });
  }

  private async openSocket(): Promise<void> {
    this.reconnectTimer = null;
    if (this.stopped) return;
    let socket: WebSocketLike;
    try {
      const token = typeof this.opts.token === 'string' ? this.opts.token : await this.opts.token();
      await this.prepare();
      const resolved = this.resolved as ResolvedWebSocket;
      if (this.stopped) return;
      const transport = resolved.transport;
      const url = socketUrl(this.opts.url, transport === 'query' ? token : null, this.opts.device);
      socket =
        transport === 'header'
          ? new resolved.ctor(url, undefined, { headers: { Authorization: `Bearer ${token}` } })
          : new resolved.ctor(url);
    } catch (err) {
      this.opts.logger.error({ err }, 'seqline: cannot open a socket');
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    const connectTimer = setTimeout(() => {
      if (this.socket === socket && socket.readyState !== OPEN) this.drop('connect timeout');
    }, this.opts.connectTimeoutMs);
    socket.onopen = () => {
      clearTimeout(connectTimer);
      if (this.socket !== socket) return;
      this.silentTimeouts = 0;
      this.opts.logger.info({ attempt: this.attempt }, 'seqline: connected');
      const waiters = [...this.openWaiters];
      this.openWaiters.clear();
      this.opts.onOpen();
      for (const w of waiters) w.opened();
    };
    socket.onmessage = (ev: { data: unknown }) => {
      if (this.socket === socket) this.onFrame(ev.data);
    };
    socket.onerror = (ev: unknown) => {
      // Upgrade refusals (401) arrive here; the close that follows schedules the retry.
      const message = (ev as { message?: unknown }).message;
      this.opts.logger.warn({ error: typeof message === 'string' ? message : 'socket error' }, 'seqline: socket error');
    };
    socket.onclose = (ev: { code: number; reason: string }) => {
      clearTimeout(connectTimer);
      if (this.socket !== socket) return;
      this.socket = null;
      this.opts.logger.info({ code: ev.code, reason: ev.reason }, 'seqline: disconnected');
      this.failInFlight(new SeqlineClientError('DISCONNECTED', 'connection closed before the reply'));
      this.opts.onClose({ code: ev.code, reason: ev.reason });
      // Replaced by a newer login: reconnecting would kick that one in turn. Stop instead.
      if (this.kickedBy !== null || ev.code === KICKED_CLOSE_CODE) return this.stopKicked(this.kickedBy ?? {});
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.attempt += 1;
    const delay = backoffDelay(this.attempt, this.opts.reconnectBackoff);
    this.opts.logger.debug({ attempt: this.attempt, delay }, 'seqline: reconnecting');
    this.reconnectTimer = setTimeout(() => void this.openSocket(), delay);
  }

  private onFrame(data: unknown): void {
    this.framesReceived += 1;
    this.silentTimeouts = 0;
    const text = frameText(data);
    const frame = text === null ? null : parseServerFrame(text);
    if (!frame) {
      this.opts.logger.warn({ length: text?.length ?? -1 }, 'seqline: ignoring a frame that is not protocol');
      return;
    }
    if (frame.kind === 'push') {
      this.opts.onPush(frame);
      return;
    }
    if (frame.kind === 'group.push') {
      this.opts.onGroupPush?.(frame);
      return;
    }
    if (frame.kind === 'kicked') {
      this.kickedBy = frame.by; // the close (4409) follows; pending replies come before it
      return;
    }
    const entry = frame.id === null ? undefined : this.inFlight.get(frame.id);
    if (!entry) {
      const fields = { id: frame.id, ok: frame.ok };
      if (frame.id === null) this.opts.logger.warn(fields, 'seqline: reply to no pending request');
      else this.opts.logger.debug(fields, 'seqline: reply to no pending request');
      return;
    }
    this.inFlight.delete(frame.id as number);
    clearTimeout(entry.timer);
    if (frame.ok) entry.resolve(frame.result);
    else entry.reject(new SeqlineClientError(frame.error.code, frame.error.message));
  }

  private stopKicked(by: KickedBy): void {
    this.stop();
    this.opts.onKicked?.(by);
  }

  private noteSilentTimeout(): void {
    this.silentTimeouts += 1;
    if (this.silentTimeouts >= this.opts.silentTimeoutsBeforeReconnect) {
      this.silentTimeouts = 0;
      this.drop('server silent through consecutive request timeouts');
    }
  }

  private failInFlight(err: SeqlineClientError): void {
    const entries = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const e of entries) {
      clearTimeout(e.timer);
      e.reject(err);
    }
  }
}

function closedError(): SeqlineClientError {
  return new SeqlineClientError('CLOSED', 'client closed');
}
