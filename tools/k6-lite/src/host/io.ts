/**
 * The host side of one VU: does the VU's WebSocket and HTTP I/O on the main thread's event
 * loop and posts the outcomes back, waking the blocked VU (Atomics.notify on its signal).
 */
import type { MessagePort } from 'node:worker_threads';
import WebSocket from 'ws';
import type { HostEvent, VuRequest } from '../protocol.ts';

export type Lifecycle = Exclude<VuRequest, { t: `ws.${string}` } | { t: 'http' | 'points' | 'log' }>;
export type PointsRequest = Extract<VuRequest, { t: 'points' }>;

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export class VuIo {
  private readonly sockets = new Map<number, WebSocket>();
  private readonly signal: Int32Array;
  private stopped = false;

  constructor(
    private readonly port: MessagePort,
    signal: SharedArrayBuffer,
    private readonly onPoints: (r: PointsRequest) => void,
    private readonly onLifecycle: (r: Lifecycle) => void,
  ) {
    this.signal = new Int32Array(signal);
    port.on('message', (r: VuRequest) => this.handle(r));
  }

  post(event: HostEvent): void {
    if (this.stopped) return;
    this.port.postMessage(event);
    Atomics.add(this.signal, 0, 1);
    Atomics.notify(this.signal, 0);
  }

  /** Closes the VU's sockets at once and stops answering it. */
  stop(): void {
    this.stopped = true;
    for (const s of this.sockets.values()) s.terminate();
    this.sockets.clear();
    this.port.close();
  }

  private handle(r: VuRequest): void {
    switch (r.t) {
      case 'points':
        this.onPoints(r);
        return;
      case 'log':
        process.stderr.write(`${r.line}\n`);
        return;
      case 'ws.open':
        this.open(r.sid, r.url, r.headers);
        return;
      case 'ws.send':
        this.sockets.get(r.sid)?.send(r.data);
        return;
      case 'ws.ping':
        this.sockets.get(r.sid)?.ping();
        return;
      case 'ws.close': {
        const s = this.sockets.get(r.sid);
        if (!s) return;
        if (r.terminate) {
          this.sockets.delete(r.sid);
          s.terminate();
        } else s.close(r.code);
        return;
      }
      case 'http':
        void this.http(r);
        return;
      default:
        this.onLifecycle(r);
    }
  }

  private open(sid: number, url: string, headers: Record<string, string>): void {
    const started = performance.now();
    let state: 'connecting' | 'open' | 'done' = 'connecting';
    let status = 101;
    let responseHeaders: Record<string, string> = {};
    const fail = (error: string, code = 0) => {
      if (state !== 'connecting') return;
      state = 'done';
      this.sockets.delete(sid);
      this.post({ t: 'ws.failed', sid, status: code, error });
    };
    const socket = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: 60_000 });
    this.sockets.set(sid, socket);
    socket.on('upgrade', (res) => {
      status = res.statusCode ?? 101;
      responseHeaders = flatHeaders(res.headers);
    });
    socket.on('unexpected-response', (req, res) => {
      fail(`bad handshake: HTTP ${res.statusCode ?? 0}`, res.statusCode ?? 0);
      res.resume();
      req.destroy();
    });
    socket.on('open', () => {
      state = 'open';
      this.post({ t: 'ws.opened', sid, status, headers: responseHeaders, connectMs: performance.now() - started });
    });
    socket.on('message', (data, isBinary) => {
      const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      this.post({
        t: 'ws.message',
        sid,
        data: isBinary ? (buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer) : buf.toString('utf8'),
      });
    });
    socket.on('ping', () => this.post({ t: 'ws.ping', sid }));
    socket.on('pong', () => this.post({ t: 'ws.pong', sid }));
    socket.on('error', (e) => {
      if (state === 'connecting') fail(e.message);
      else if (state === 'open') this.post({ t: 'ws.error', sid, error: e.message });
    });
    socket.on('close', (code) => {
      if (state === 'connecting') {
        fail(`closed during the handshake (${code})`);
        return;
      }
      if (state === 'done') return;
      state = 'done';
      this.sockets.delete(sid);
      this.post({ t: 'ws.closed', sid, code });
    });
  }

  private async http(r: Extract<VuRequest, { t: 'http' }>): Promise<void> {
    const started = performance.now();
    try {
      const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(r.timeoutMs) });
      const body = await res.text();
      this.post({
        t: 'http.done',
        rid: r.rid,
        status: res.status,
        headers: Object.fromEntries(res.headers),
        body,
        error: '',
        durationMs: performance.now() - started,
      });
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      this.post({
        t: 'http.done',
        rid: r.rid,
        status: 0,
        headers: {},
        body: '',
        error: `${e instanceof Error ? e.message : String(e)}${cause}`,
        durationMs: performance.now() - started,
      });
    }
  }
}
