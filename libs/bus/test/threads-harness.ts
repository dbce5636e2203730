/**
 * Real worker threads for the threads tests: a fixture (test/fixtures/thread-*.ts) runs in its
 * own thread with its seat of the mesh; the test thread keeps the other seats.
 */
import { Worker, type MessagePort } from 'node:worker_threads';
import { joinThreads, seatPorts, threadMesh, type ThreadHub, type ThreadSeat } from '../src/threads.ts';

export interface RunningThread {
  worker: Worker;
  /** Resolves with the exit code once the thread ended. */
  exited: Promise<number>;
  /** What the thread threw uncaught, if it did. */
  errors: Error[];
}

/** Starts `fixture` in a worker thread with `seat` (its ports transferred) and `data`. */
export function startThread(fixture: string, seat: ThreadSeat, data: Record<string, unknown> = {}): RunningThread {
  const module = new URL(`./fixtures/${fixture}`, import.meta.url).href;
  const transferList: MessagePort[] = seatPorts(seat);
  const worker = new Worker(new URL('./fixtures/threads-boot.mjs', import.meta.url), {
    workerData: { ...data, seat, module },
    transferList,
    execArgv: ['--conditions=source'],
  });
  const errors: Error[] = [];
  worker.on('error', (err) => errors.push(err));
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  return { worker, exited, errors };
}

/**
 * A mesh of `count` seats: the test thread joins seat `count - 1` (its hub returned), and each
 * other seat goes to a worker thread running `fixture`.
 */
export function meshWithThreads(
  count: number,
  fixture: string,
  data: (seat: ThreadSeat) => Record<string, unknown> = () => ({}),
): { hub: ThreadHub; threads: RunningThread[] } {
  const seats = threadMesh(count);
  const mine = seats.pop()!;
  const threads = seats.map((seat) => startThread(fixture, seat, data(seat)));
  return { hub: joinThreads(mine), threads };
}
