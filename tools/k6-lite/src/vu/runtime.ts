/**
 * The VU side of k6-lite, one per worker thread: the blocking channel to the host, the VU's
 * identity (__VU, __ITER), its phase (k6 allows some calls only in the init context) and its
 * buffer of metric points. The k6/* module implementations use it.
 */
import { format } from 'node:util';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Contains, HostEvent, MetricType, Point, Tags, VuRequest } from '../protocol.ts';

export type Phase = 'init' | 'setup' | 'vu' | 'teardown';

const FLUSH_AT = 256;

class VuRuntime {
  vu = 0;
  phase: Phase = 'init';
  private port: MessagePort | undefined;
  private signal: Int32Array | undefined;
  /** Events received but not yet asked for (e.g. a socket's message while an HTTP reply is awaited). */
  private readonly inbox: HostEvent[] = [];
  private points: Point[] = [];
  /** Sockets whose session ended: their late events (a close after a terminate) are dropped. */
  private readonly endedSockets = new Set<number>();
  private nextId = 0;

  attach(port: MessagePort, signal: SharedArrayBuffer, vu: number): void {
    this.port = port;
    this.signal = new Int32Array(signal);
    this.vu = vu;
  }

  id(): number {
    return ++this.nextId;
  }

  /** A log line, on the channel so that it reaches the host before the VU's next lifecycle message. */
  log(level: 'INFO' | 'WARN' | 'ERRO' | 'DEBU', ...args: unknown[]): void {
    this.post({ t: 'log', line: `${level}[vu ${this.vu}] ${format(...args)}` });
  }

  post(request: VuRequest): void {
    if (!this.port) throw new Error('k6-lite: the k6 modules run only inside k6-lite');
    this.port.postMessage(request);
  }

  /**
   * Blocks until a host event matching `match` arrives (returned) or `deadline` (epoch ms)
   * passes (undefined). Other events are kept for a later take.
   */
  take<T extends HostEvent>(match: (e: HostEvent) => e is T, deadline = Infinity): T | undefined {
    const port = this.port;
    const signal = this.signal;
    if (!port || !signal) throw new Error('k6-lite: the k6 modules run only inside k6-lite');
    for (;;) {
      const i = this.inbox.findIndex(match);
      if (i >= 0) return this.inbox.splice(i, 1)[0] as T;
      // Read the counter before draining: an event posted after the drain bumps it, and the
      // wait below returns at once instead of sleeping through it.
      const seen = Atomics.load(signal, 0);
      let received = false;
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
        const event = m.message as HostEvent;
        if ('sid' in event && this.endedSockets.has(event.sid)) continue;
        this.inbox.push(event);
        received = true;
      }
      if (received) continue;
      this.flush();
      const wait = deadline - Date.now();
      if (wait <= 0) return undefined;
      Atomics.wait(signal, 0, seen, wait === Infinity ? undefined : wait);
    }
  }

  /** A socket's session ended: forget its buffered events and drop any that come later. */
  endSocket(sid: number): void {
    this.endedSockets.add(sid);
    for (let i = this.inbox.length - 1; i >= 0; i--) {
      const e = this.inbox[i]!;
      if ('sid' in e && e.sid === sid) this.inbox.splice(i, 1);
    }
  }

  emit(metric: string, type: MetricType, contains: Contains, value: number, tags: Tags): void {
    this.points.push({ metric, type, contains, time: Date.now(), value, tags: { scenario: 'default', ...tags } });
    if (this.points.length >= FLUSH_AT) this.flush();
  }

  flush(): void {
    if (this.points.length === 0 || !this.port) return;
    this.port.postMessage({ t: 'points', points: this.points } satisfies VuRequest);
    this.points = [];
  }
}

export const runtime = new VuRuntime();

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the VU for `ms` (k6's sleep; nothing else runs on a VU meanwhile). */
export function blockFor(ms: number): void {
  runtime.flush();
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}
