/**
 * k6/ws: `connect` opens a WebSocket, hands the socket to the callback and then runs the
 * socket's event loop (messages, timers) until it closes, blocking the VU like k6 does. It
 * emits k6's ws_* metrics.
 */
import type { HostEvent, SocketEvent, Tags } from '../protocol.ts';
import { runtime } from '../vu/runtime.ts';

type EventName = 'open' | 'message' | 'binaryMessage' | 'close' | 'error' | 'ping' | 'pong';
type Handler = (...args: never[]) => void;
interface Timer {
  at: number;
  every: number | null;
  fn: () => void;
}

export interface Params {
  headers?: Record<string, string>;
  tags?: Tags;
}
export interface Response {
  url: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  error: string;
}

class WebSocketError {
  constructor(private readonly message: string) {}
  error(): string {
    return this.message;
  }
}

class Socket {
  private readonly handlers = new Map<EventName, Handler[]>();
  private timers: Timer[] = [];
  private closing = false;
  closed = false;
  private pingSentAt: number | undefined;

  constructor(
    private readonly sid: number,
    private readonly tags: Tags,
  ) {}

  on(event: EventName, handler: Handler): void {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), handler]);
  }

  send(data: string): void {
    if (this.closing) return;
    runtime.post({ t: 'ws.send', sid: this.sid, data: String(data) });
    runtime.emit('ws_msgs_sent', 'counter', 'default', 1, this.tags);
  }

  sendBinary(data: ArrayBuffer): void {
    if (this.closing) return;
    runtime.post({ t: 'ws.send', sid: this.sid, data });
    runtime.emit('ws_msgs_sent', 'counter', 'default', 1, this.tags);
  }

  ping(): void {
    if (this.closing) return;
    this.pingSentAt = Date.now();
    runtime.post({ t: 'ws.ping', sid: this.sid });
  }

  /** Starts the close handshake; the event loop runs until the socket has closed. */
  close(code = 1000): void {
    if (this.closing) return;
    this.closing = true;
    this.timers = [];
    runtime.post({ t: 'ws.close', sid: this.sid, code, terminate: false });
  }

  setTimeout(fn: () => void, delayMs: number): void {
    this.timers.push({ at: Date.now() + Math.max(0, Number(delayMs)), every: null, fn });
  }

  setInterval(fn: () => void, intervalMs: number): void {
    if (!(Number(intervalMs) > 0)) throw new Error(`setInterval: interval must be > 0, got ${intervalMs}`);
    this.timers.push({ at: Date.now() + Number(intervalMs), every: Number(intervalMs), fn });
  }

  nextTimerAt(): number {
    return this.timers.reduce((at, t) => Math.min(at, t.at), Infinity);
  }

  /** Runs the timers that are due, in due order (an interval is rescheduled from its due time). */
  fireDueTimers(): void {
    for (;;) {
      const now = Date.now();
      const due = this.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at)[0];
      if (!due || this.closed) return;
      if (due.every === null) this.timers = this.timers.filter((t) => t !== due);
      else due.at = Math.max(due.at + due.every, now - due.every);
      due.fn();
    }
  }

  fire(event: EventName, ...args: unknown[]): void {
    for (const h of this.handlers.get(event) ?? []) (h as (...a: unknown[]) => void)(...args);
  }

  dispatch(e: SocketEvent): void {
    switch (e.t) {
      case 'ws.message':
        runtime.emit('ws_msgs_received', 'counter', 'default', 1, this.tags);
        if (typeof e.data === 'string') this.fire('message', e.data);
        else this.fire('binaryMessage', e.data);
        return;
      case 'ws.ping':
        this.fire('ping');
        return;
      case 'ws.pong':
        if (this.pingSentAt !== undefined) runtime.emit('ws_ping', 'trend', 'time', Date.now() - this.pingSentAt, this.tags);
        this.fire('pong');
        return;
      case 'ws.error':
        this.fire('error', new WebSocketError(e.error));
        return;
      case 'ws.closed':
        this.closed = true;
        this.timers = [];
        this.fire('close', e.code);
        return;
      default:
        return;
    }
  }
}

export function connect(
  url: string,
  paramsOrCallback: Params | null | ((socket: Socket) => void),
  maybeCallback?: (socket: Socket) => void,
): Response {
  const callback = typeof paramsOrCallback === 'function' ? paramsOrCallback : maybeCallback;
  const params = typeof paramsOrCallback === 'function' ? null : paramsOrCallback;
  if (typeof callback !== 'function') throw new Error('ws.connect: a callback (socket) => { ... } is required');
  if (runtime.phase === 'init') throw new Error('ws.connect: not available in the init context');
  const sid = runtime.id();
  const begun = Date.now();
  const ofThisSocket = (e: HostEvent): e is SocketEvent => 'sid' in e && e.sid === sid;
  runtime.post({ t: 'ws.open', sid, url, headers: { ...params?.headers } });
  const opened = runtime.take(
    (e): e is Extract<HostEvent, { t: 'ws.opened' | 'ws.failed' }> => ofThisSocket(e) && (e.t === 'ws.opened' || e.t === 'ws.failed'),
  );
  if (!opened || opened.t === 'ws.failed') {
    runtime.endSocket(sid);
    throw new Error(`websocket: ${opened?.error ?? 'no answer'} (${url})`);
  }
  const tags: Tags = { url, status: String(opened.status), ...params?.tags };
  runtime.emit('ws_sessions', 'counter', 'default', 1, tags);
  runtime.emit('ws_connecting', 'trend', 'time', opened.connectMs, tags);
  const socket = new Socket(sid, tags);
  try {
    callback(socket);
    socket.fire('open');
    for (;;) {
      socket.fireDueTimers();
      if (socket.closed) break;
      const e = runtime.take(ofThisSocket, socket.nextTimerAt());
      if (e) socket.dispatch(e);
    }
  } finally {
    if (!socket.closed) runtime.post({ t: 'ws.close', sid, code: 1006, terminate: true });
    runtime.endSocket(sid);
    runtime.emit('ws_session_duration', 'trend', 'time', Date.now() - begun, tags);
  }
  return { url, status: opened.status, headers: opened.headers, body: '', error: '' };
}

export default { connect };
