/**
 * The ports that join the threads of one process, made by the thread that starts them: one
 * MessageChannel per pair, each thread given its ends (a seat) to pass in `workerData` with
 * `transferList: seatPorts(seat)`. Thread i owns the inbox shards s ≡ i (mod threads).
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { DEFAULT_SHARD_COUNT, type Logger } from '@seqline/core';
import { ThreadHub } from './threads-hub.ts';

/** One thread's ends of the mesh. */
export interface ThreadSeat {
  self: number;
  ports: Array<{ thread: number; port: MessagePort }>;
}

/** Seats for `count` threads numbered 0..count-1, each joined to every other. */
export function threadMesh(count: number): ThreadSeat[] {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`bad thread count ${count}`);
  const seats: ThreadSeat[] = Array.from({ length: count }, (_, self) => ({ self, ports: [] }));
  for (let a = 0; a < count; a++) {
    for (let b = a + 1; b < count; b++) {
      const { port1, port2 } = new MessageChannel();
      seats[a]!.ports.push({ thread: b, port: port1 });
      seats[b]!.ports.push({ thread: a, port: port2 });
    }
  }
  return seats;
}

/** What `new Worker(…, { workerData: { seat }, transferList })` must transfer. */
export function seatPorts(seat: ThreadSeat): MessagePort[] {
  return seat.ports.map((p) => p.port);
}

/** This thread's hub, joined to the others through its seat. */
export function joinThreads(seat: ThreadSeat, logger?: Logger): ThreadHub {
  const hub = new ThreadHub({ self: seat.self, ...(logger && { logger }) });
  for (const { thread, port } of seat.ports) hub.connect(thread, port);
  return hub;
}

/** The thread that owns `shard` among `threads`. */
export function threadOfShard(shard: number, threads: number): number {
  return shard % threads;
}

/** The shards thread `thread` owns among `threads` (its InboxOwner's `ownedShards`). */
export function shardsOfThread(thread: number, threads: number, shardCount = DEFAULT_SHARD_COUNT): number[] {
  return Array.from({ length: shardCount }, (_, shard) => shard).filter((shard) => threadOfShard(shard, threads) === thread);
}
