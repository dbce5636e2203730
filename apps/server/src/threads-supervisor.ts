/**
 * The main thread of a threaded `npm start`: it runs the engine's one-time chores, starts one
 * server thread per seat of the thread mesh (server-thread.ts), restarts a thread that dies
 * (joined again to the others by new ports), and shuts down with barriers — each step
 * (SERVER_SHUTDOWN_STEPS) done on every thread before any thread starts the next.
 */
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { Logger } from '@seqline/core';
import { seatPorts, threadMesh, type ThreadSeat } from '@seqline/bus/threads';
import { openEmbeddedEngine, rollBackThreadWrites } from '@seqline/store';
import type { ServerConfig } from './config.ts';
import { SERVER_SHUTDOWN_STEPS } from './embedded-server.ts';
import type { FromThread, ServerThreadData, ShutdownStep, ToThread } from './thread-messages.ts';

export interface ThreadedServer {
  port: number;
  threads: number;
  /** Rejects when a thread cannot start (at first, or restarted): the process should stop. */
  failed: Promise<never>;
  /** The worker running thread `i` now (tests end one to see it restarted). */
  worker(i: number): Worker;
  /** Resolves once thread `i` was restarted `count` times in all and listens again. */
  restarted(i: number, count: number): Promise<void>;
  /** The ordered shutdown across threads; resolves once every thread has ended. */
  close(): Promise<void>;
}

export interface ThreadedServerOptions {
  /** Node options of the threads (default: this process's, so a source run loads TypeScript alike). */
  execArgv?: string[];
}

interface RunningThread {
  worker: Worker;
  listening: boolean;
  ended: boolean;
  exited: Promise<void>;
  steps: Map<ShutdownStep, () => void>;
}

export async function startThreadedServer(
  config: ServerConfig,
  logger: Logger,
  options: ThreadedServerOptions = {},
): Promise<ThreadedServer> {
  const log = logger.child({ component: 'threads-supervisor' });
  // Migrations and a crash's scratch removal, once, before any thread opens the environment.
  await (await openEmbeddedEngine({ dir: join(config.dataDir, 'db'), logger })).close();
  const here = fileURLToPath(import.meta.url);
  const entry = new URL(`./server-thread${extname(here)}`, import.meta.url);
  const running: RunningThread[] = [];
  const restarts = new Map<number, number>();
  const restartWaiters = new Set<() => void>();
  let stopping = false;
  let fail: (err: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => undefined);

  function spawn(seat: ThreadSeat, port: number): Promise<number> {
    const data: ServerThreadData = { seat, threads: config.threads, config: { ...config, PORT: port } };
    const worker = new Worker(entry, {
      workerData: data,
      transferList: seatPorts(seat),
      ...(options.execArgv && { execArgv: options.execArgv }),
    });
    // Read now: a worker that ended may no longer say which thread it was.
    const threadId = worker.threadId;
    const thread: RunningThread = {
      worker,
      listening: false,
      ended: false,
      exited: new Promise((resolve) => worker.once('exit', () => resolve())),
      steps: new Map(),
    };
    running[seat.self] = thread;
    return new Promise<number>((resolve, reject) => {
      worker.on('message', (msg: FromThread) => {
        if (msg.op === 'listening') {
          thread.listening = true;
          return resolve(msg.port);
        }
        if (msg.error !== undefined) log.error({ thread: seat.self, step: msg.step, error: msg.error }, 'shutdown step failed');
        thread.steps.get(msg.step)?.();
      });
      worker.on('error', (err) => log.error({ err, thread: seat.self }, 'server thread threw'));
      worker.once('exit', (code) => {
        thread.ended = true;
        // A step waiting on a thread gone is done: its sockets and work went with it.
        for (const done of thread.steps.values()) done();
        if (!thread.listening) return reject(new Error(`server thread ${seat.self} ended (code ${code}) before listening`));
        if (stopping || running[seat.self] !== thread) return;
        log.error({ thread: seat.self, code }, 'server thread ended; restarting it');
        // Its end may have torn a write transaction (lmdb-js commits what the callback had
        // written): that is undone before anything else starts in its place.
        rollBackThreadWrites({ dir: join(config.dataDir, 'db'), threadId, logger }).then(
          () => restart(seat.self, port),
          (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
        );
      });
    });
  }

  /** A new thread `self`, with a new port to each other thread (theirs replace the one to the thread gone). */
  function restart(self: number, port: number): void {
    const seat: ThreadSeat = { self, ports: [] };
    running.forEach((other, thread) => {
      if (thread === self) return;
      const { port1, port2 } = new MessageChannel();
      seat.ports.push({ thread, port: port1 });
      other.worker.postMessage({ op: 'peer', thread: self, port: port2 } satisfies ToThread, [port2]);
    });
    spawn(seat, port).then(
      () => {
        restarts.set(self, (restarts.get(self) ?? 0) + 1);
        log.info({ thread: self, restarts: restarts.get(self) }, 'server thread restarted');
        for (const wake of [...restartWaiters]) wake();
      },
      (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
    );
  }

  const seats = threadMesh(config.threads);
  // The first thread binds the port (PORT=0: one the kernel picks); the others share it.
  const port = await spawn(seats[0]!, config.PORT);
  await Promise.all(seats.slice(1).map((seat) => spawn(seat, port)));

  async function runStep(step: ShutdownStep): Promise<void> {
    await Promise.all(
      running.map(
        (thread) =>
          new Promise<void>((resolve) => {
            if (thread.ended) return resolve();
            thread.steps.set(step, resolve);
            thread.worker.postMessage({ op: 'step', step } satisfies ToThread);
          }),
      ),
    );
  }

  let closing: Promise<void> | undefined;
  return {
    port,
    threads: config.threads,
    failed,
    worker: (i) => running[i]!.worker,
    restarted: (i, count) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if ((restarts.get(i) ?? 0) < count) return;
          restartWaiters.delete(check);
          resolve();
        };
        restartWaiters.add(check);
        check();
      }),
    close: () =>
      (closing ??= (async () => {
        stopping = true;
        for (const step of SERVER_SHUTDOWN_STEPS) await runStep(step);
        await Promise.all(running.map((thread) => thread.exited));
      })()),
  };
}
