/** One VU's worker thread as the host sees it: start it, command it, await its lifecycle messages. */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { HostEvent, VuWorkerData } from '../protocol.ts';
import { VuIo, type Lifecycle, type PointsRequest } from './io.ts';

/** The script failed in init, setup or teardown (k6 exit code 107). */
export class ScriptError extends Error {
  override readonly name = 'ScriptError';
}

/** A lifecycle step (`step`: the message that did not come) did not finish in time. */
export class StepTimeoutError extends Error {
  override readonly name = 'StepTimeoutError';
  constructor(
    message: string,
    readonly step: Lifecycle['t'],
  ) {
    super(message);
  }
}

type Waiter = { t: Lifecycle['t']; resolve: (m: Lifecycle) => void; reject: (e: Error) => void };

export class VuHandle {
  private readonly worker: Worker;
  private readonly io: VuIo;
  private readonly received: Lifecycle[] = [];
  private waiters: Waiter[] = [];
  private failure: Error | undefined;
  private stopped = false;

  constructor(
    readonly vu: number,
    data: Omit<VuWorkerData, 'vu' | 'signal' | 'port'>,
    onPoints: (r: PointsRequest) => void,
  ) {
    const { port1, port2 } = new MessageChannel();
    const signal = new SharedArrayBuffer(4);
    this.io = new VuIo(port1, signal, onPoints, (m) => this.deliver(m));
    const workerData: VuWorkerData = { ...data, vu, signal, port: port2 };
    this.worker = new Worker(new URL('../boot.mjs', import.meta.url), { workerData, transferList: [port2] });
    this.worker.on('error', (e) => this.fail(new ScriptError(`vu ${vu}: ${e.stack ?? e.message}`)));
    this.worker.on('exit', (code) => this.fail(new ScriptError(`vu ${vu}: worker exited (${code})`)));
  }

  command(event: HostEvent): void {
    this.io.post(event);
  }

  /** The VU's next `t` message; rejects on a script failure, on the worker's exit, or after timeoutMs. */
  expect<T extends Lifecycle['t']>(t: T, timeoutMs: number): Promise<Extract<Lifecycle, { t: T }>> {
    const i = this.received.findIndex((m) => m.t === t);
    if (i >= 0) return Promise.resolve(this.received.splice(i, 1)[0] as Extract<Lifecycle, { t: T }>);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new StepTimeoutError(`vu ${this.vu}: no ${t} after ${timeoutMs} ms`, t));
      }, timeoutMs);
      const waiter: Waiter = {
        t,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m as Extract<Lifecycle, { t: T }>);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.waiters.push(waiter);
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.failure ??= new ScriptError(`vu ${this.vu}: stopped`);
    this.io.stop();
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }

  private deliver(m: Lifecycle): void {
    if (m.t === 'fatal') {
      this.fail(new ScriptError(m.message));
      return;
    }
    const waiter = this.waiters.find((w) => w.t === m.t);
    if (!waiter) {
      this.received.push(m);
      return;
    }
    this.waiters = this.waiters.filter((w) => w !== waiter);
    waiter.resolve(m);
  }

  private fail(e: Error): void {
    this.failure ??= e;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(this.failure);
  }
}
