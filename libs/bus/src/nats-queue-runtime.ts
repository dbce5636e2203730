/**
 * A queue a NatsWorkQueue (nats-work-queue.ts) consumes in this process: the deliveries it holds
 * (running or waiting for their key), and how one is taken in, kept from redelivery and let go.
 */
import type { JobHandler, Logger, QueueOptions } from '@seqline/core';
import type { Subscription } from '@nats-io/transport-node';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { KeyedDispatcher } from './keyed-dispatcher.ts';
import { isJobEnvelope } from './nats-streams.ts';
import type { JobEnvelope } from './nats-streams.ts';
import { keyOfPayload } from './queue-common.ts';

export interface Delivery {
  msg: JsMsg;
  job: JobEnvelope;
  receivedAt: number;
}

export interface QueueRuntime {
  name: string;
  handler: JobHandler;
  dispatcher: KeyedDispatcher<Delivery>;
  held: Set<Delivery>;
  capacity: number;
  stopped: boolean;
  batch?: ConsumerMessages;
  roomFreed?: () => void;
  loop?: Promise<void>;
  heartbeat?: NodeJS.Timeout;
  advisory?: Subscription;
}

export function release(rt: QueueRuntime, delivery: Delivery): void {
  rt.held.delete(delivery);
  const wake = rt.roomFreed;
  rt.roomFreed = undefined;
  wake?.();
}

export function accept(rt: QueueRuntime, msg: JsMsg, rtOptions: QueueOptions, logger: Logger): void {
  if (rt.stopped) {
    msg.nak(); // another consumer can take it at once
    return;
  }
  let job: unknown;
  try {
    job = msg.json();
  } catch {
    job = undefined;
  }
  if (!isJobEnvelope(job)) {
    logger.error({ queue: rt.name, seq: msg.seq }, 'terminating a job message of unknown format');
    msg.term('unknown job format');
    return;
  }
  const delivery: Delivery = { msg, job, receivedAt: Date.now() };
  rt.held.add(delivery);
  rt.dispatcher.submit(delivery, keyOfPayload(rtOptions, job.payload, logger));
}

/** Keeps every held delivery (running or waiting for its key) from being redelivered. */
export function startHeartbeat(rt: QueueRuntime, ackWaitMs: number): NodeJS.Timeout {
  const every = Math.max(20, Math.floor(ackWaitMs / 3));
  return setInterval(() => {
    const now = Date.now();
    for (const delivery of rt.held) if (now - delivery.receivedAt >= every) delivery.msg.working();
  }, every);
}
