/** What the main thread and a server thread (server-thread.ts) tell each other over its parentPort. */
import type { MessagePort } from 'node:worker_threads';
import type { ThreadSeat } from '@seqline/bus/threads';
import type { ServerConfig } from './config.ts';
import type { SERVER_SHUTDOWN_STEPS } from './embedded-server.ts';

export type ShutdownStep = (typeof SERVER_SHUTDOWN_STEPS)[number];

/** A server thread's `workerData`. */
export interface ServerThreadData {
  seat: ThreadSeat;
  threads: number;
  /** The main thread's, read once (plain data: it clones as is); PORT is the one every thread listens on. */
  config: ServerConfig;
}

export type ToThread =
  /** A thread restarted: this is the port to it (replaces the one to the thread gone). */
  { op: 'peer'; thread: number; port: MessagePort } | { op: 'step'; step: ShutdownStep };

export type FromThread = { op: 'listening'; port: number } | { op: 'stepDone'; step: ShutdownStep; error?: string };
