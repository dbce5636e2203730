/**
 * Messages between a VU's worker thread and the host (main) thread. The VU blocks (k6 semantics:
 * `ws.connect`, `http.get` and `sleep` return only when done) while the host does the I/O on its
 * event loop; see vu/runtime.ts (take) for how a blocked VU receives host events.
 */
import type { MessagePort } from 'node:worker_threads';

export type Tags = Record<string, string>;
export type MetricType = 'counter' | 'gauge' | 'rate' | 'trend';
export type Contains = 'time' | 'default';

/** One data point, as k6's `--out json` writes it (time in epoch ms here). */
export interface Point {
  metric: string;
  type: MetricType;
  contains: Contains;
  time: number;
  value: number;
  tags: Tags;
}

export interface ScriptExports {
  setup: boolean;
  teardown: boolean;
  default: boolean;
}

/** VU → host. */
export type VuRequest =
  | { t: 'ws.open'; sid: number; url: string; headers: Record<string, string> }
  | { t: 'ws.send'; sid: number; data: string | ArrayBuffer }
  | { t: 'ws.ping'; sid: number }
  | { t: 'ws.close'; sid: number; code: number; terminate: boolean }
  | { t: 'http'; rid: number; method: string; url: string; headers: Record<string, string>; body: string | null; timeoutMs: number }
  | { t: 'points'; points: Point[] }
  | { t: 'log'; line: string }
  | { t: 'init.done'; options: unknown; exports: ScriptExports }
  | { t: 'setup.done'; data: string | undefined }
  | { t: 'teardown.done' }
  | { t: 'vu.done'; iterations: number }
  | { t: 'fatal'; message: string };

/** Host → VU. `sid`: a socket of that VU; `rid`: an HTTP request of that VU. */
export type HostEvent =
  | { t: 'ws.opened'; sid: number; status: number; headers: Record<string, string>; connectMs: number }
  | { t: 'ws.failed'; sid: number; status: number; error: string }
  | { t: 'ws.message'; sid: number; data: string | ArrayBuffer }
  | { t: 'ws.ping' | 'ws.pong'; sid: number }
  | { t: 'ws.error'; sid: number; error: string }
  | { t: 'ws.closed'; sid: number; code: number }
  | { t: 'http.done'; rid: number; status: number; headers: Record<string, string>; body: string; error: string; durationMs: number }
  | { t: 'cmd.setup' }
  | { t: 'cmd.start'; endAt: number; setupData: string | undefined }
  | { t: 'cmd.teardown'; setupData: string | undefined };

export type SocketEvent = Extract<HostEvent, { sid: number }>;

/** What a worker thread is started with (workerData). */
export interface VuWorkerData {
  /** 0: the init/setup/teardown VU (k6's __VU 0); 1..n: the VUs that run `default`. */
  vu: number;
  script: string;
  env: Record<string, string>;
  /** Int32 slot 0: bumped by the host after each event it posts (Atomics.notify wakes the VU). */
  signal: SharedArrayBuffer;
  port: MessagePort;
  /** shared-iterations: Int32 slot 0 counts iterations claimed by every VU; null: run until endAt. */
  iterations: { claimed: SharedArrayBuffer; total: number } | null;
}
