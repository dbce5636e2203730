import { InternalError, systemClock } from '@seqline/core';
import type { JobEnqueue, QueueConsume, QueueOptions, StoredJob } from '@seqline/core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { attemptsSpanning, DEFAULT_BACKOFF, DEFAULT_MAX_CRASHED_DELIVERIES, deliveryVerdict } from './backoff.ts';
import { KeyedDispatcher } from './keyed-dispatcher.ts';
import { NatsDeadLetters } from './nats-dead-letters.ts';
import { NatsJobFailures } from './nats-job-failures.ts';
import { natsError } from './nats-unavailable.ts';
import { ensureJobStreams, ensureQueueConsumer, jobTopology } from './nats-streams.ts';
import type { JobEnvelope } from './nats-streams.ts';
import { errorMessage, statsOf, type QueueStats } from './queue-common.ts';
import { durableName, isValidQueueName } from './subject-token.ts';
import { DEFAULT_NATS_BACKOFF_MS, type NatsWorkQueue, type NatsWorkQueueOptions } from './nats-work-queue-options.ts';
import { accept, release, startHeartbeat, type Delivery, type QueueRuntime } from './nats-queue-runtime.ts';

export type { NatsWorkQueue, NatsWorkQueueOptions } from './nats-work-queue-options.ts';

interface Setup {
  jsm: JetStreamManager;
  dead: NatsDeadLetters;
  failures: NatsJobFailures;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Distributed-mode work queue on JetStream: `enqueue` resolves on the stream's PubAck (stored on
 * file), a job leaves the stream only when acked after its handler succeeded, and any number of
 * processes share one durable pull consumer per queue. Delivery is at-least-once.
 */
export function createNatsWorkQueue(options: NatsWorkQueueOptions): NatsWorkQueue {
  const { nc } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger.child({ component: 'nats-work-queue' });
  const topology = jobTopology(options.streamPrefix ?? 'SEQLINE', options.subjectPrefix ?? '');
  const backoffMs = options.backoffMs ?? DEFAULT_NATS_BACKOFF_MS;
  if (backoffMs.length === 0 || backoffMs.some((ms) => !(ms > 0) || !Number.isFinite(ms)))
    throw new InternalError('backoffMs must be positive delays');
  // The give-up window as a count of failed attempts: JetStream keeps no per-job time across processes.
  const maxDeliver = options.maxDeliver ?? attemptsSpanning(options.giveUpAfterMs ?? DEFAULT_BACKOFF.giveUpAfterMs, backoffMs);
  if (!(maxDeliver >= 1)) throw new InternalError('maxDeliver must be at least 1');
  const maxCrashedDeliveries = options.maxCrashedDeliveries ?? DEFAULT_MAX_CRASHED_DELIVERIES;
  if (!(Number.isSafeInteger(maxCrashedDeliveries) && maxCrashedDeliveries >= 0))
    throw new InternalError('maxCrashedDeliveries must be a count');
  const ackWaitMs = options.ackWaitMs ?? 30_000;
  const js = jetstream(nc);
  const runtimes = new Map<string, QueueRuntime>();
  /** stopConsuming ran: no delivery starts; enqueues still publish. */
  let stopping: Promise<void> | undefined;
  /** close ran: enqueues refused. */
  let closed = false;
  const publishes = new Set<Promise<unknown>>();
  let setup: Promise<Setup> | undefined;

  function ready(): Promise<Setup> {
    setup ??= (async () => {
      const jsm = await jetstreamManager(nc);
      await ensureJobStreams(jsm, topology, options.duplicateWindowMs ?? 120_000);
      return { jsm, dead: new NatsDeadLetters(js, jsm, topology, logger), failures: new NatsJobFailures(js, jsm, topology, logger) };
    })().catch((err: unknown) => {
      setup = undefined; // retry on the next call
      throw err;
    });
    return setup;
  }

  function assertUsable(queue?: string): void {
    if (closed) throw new InternalError('work queue is closed');
    if (queue !== undefined && !isValidQueueName(queue))
      throw new InternalError(`invalid queue name ${JSON.stringify(queue)}: use dot-separated words of [A-Za-z0-9_-]`);
  }

  function retryDelay(attempt: number): number {
    return backoffMs[Math.min(attempt, backoffMs.length) - 1]!;
  }

  async function run(rt: QueueRuntime, delivery: Delivery): Promise<void> {
    const { msg, job } = delivery;
    const attempt = msg.info.deliveryCount;
    const { failures } = await ready();
    // A first delivery has no failures yet; otherwise the recorded ones (deliveries if unreadable).
    const failed = attempt === 1 ? 0 : ((await failures.count(rt.name, msg.seq)) ?? attempt - 1);
    const verdict = deliveryVerdict({ deliveries: attempt, failures: failed, maxCrashed: maxCrashedDeliveries });
    if (!verdict.run) {
      // Its workers kept dying with it (or hanging): park it unrun.
      const why = `${verdict.crashed} deliveries ended without an ack (worker crashed or hung), ${failed} failed`;
      await buryAndAck(rt, delivery, attempt - 1, why, failed > 0);
      release(rt, delivery);
      return;
    }
    try {
      await rt.handler(job.payload, { id: job.id, attempt });
      await msg.ackAck().catch((err: unknown) => {
        logger.warn({ err, queue: rt.name, id: job.id }, 'ack not confirmed; the job may run again');
      });
      if (failed > 0) await failures.forget(rt.name, msg.seq);
    } catch (err) {
      await onFailure(rt, delivery, failed + 1, err);
    } finally {
      release(rt, delivery);
    }
  }

  /** `failed` counts this failure: only a handler's failure counts toward giving up, never a crashed delivery. */
  async function onFailure(rt: QueueRuntime, { msg, job }: Delivery, failed: number, err: unknown): Promise<void> {
    const lastError = errorMessage(err);
    if (failed < maxDeliver) {
      const delay = retryDelay(failed);
      logger.warn({ queue: rt.name, id: job.id, failed, retryInMs: delay, lastError }, 'job failed; will retry');
      const { failures } = await ready();
      await failures.record(rt.name, msg.seq, failed);
      msg.nak(delay);
      return;
    }
    await buryAndAck(rt, { msg, job }, failed, lastError, failed > 1);
  }

  async function buryAndAck(
    rt: QueueRuntime,
    { msg, job }: Pick<Delivery, 'msg' | 'job'>,
    attempts: number,
    lastError: string,
    recorded: boolean,
  ): Promise<void> {
    try {
      const { dead, failures } = await ready();
      await dead.bury(job, msg.seq, attempts, lastError, clock.now());
      await msg.ackAck();
      if (recorded) await failures.forget(job.queue, msg.seq);
    } catch (err) {
      // Left unacked: it is delivered once more (and filed then), or the advisory files it.
      logger.error({ err, queue: rt.name, id: job.id }, 'could not dead-letter a job');
    }
  }

  /** Pulls only as many deliveries as there is room for, so none waits unattended. */
  async function pull(rt: QueueRuntime, queueOptions: QueueOptions): Promise<void> {
    const consumer = await js.consumers.get(topology.jobsStream, durableName(rt.name));
    while (!rt.stopped) {
      const room = rt.capacity - rt.held.size;
      if (room <= 0) {
        await new Promise<void>((resolve) => {
          rt.roomFreed = resolve;
        });
        continue;
      }
      try {
        rt.batch = await consumer.fetch({ max_messages: room, expires: 5_000 });
        if (rt.stopped) await rt.batch.close(); // close() ran while the pull was being set up
        for await (const msg of rt.batch) accept(rt, msg, queueOptions, logger);
      } catch (err) {
        if (rt.stopped) break;
        logger.warn({ err, queue: rt.name }, 'pull failed; retrying');
        await sleep(Math.min(ackWaitMs, 1_000));
      } finally {
        rt.batch = undefined;
      }
    }
  }

  /**
   * Stops every consumer: no delivery starts, those not started yet go back at once (rather than
   * after the ack wait), and it resolves once the running handlers have finished and their acks
   * and naks reached the server.
   */
  function stopConsuming(): Promise<void> {
    stopping ??= (async () => {
      await Promise.all(
        [...runtimes.values()].map(async (rt) => {
          rt.stopped = true;
          rt.advisory?.unsubscribe();
          rt.roomFreed?.();
          await rt.batch?.close();
          for (const delivery of rt.dispatcher.stop()) {
            rt.held.delete(delivery);
            delivery.msg.nak();
          }
          await rt.dispatcher.idle();
          await rt.loop;
          clearInterval(rt.heartbeat);
        }),
      );
      // Acks and naks are plain publishes: flush so the server has them before we return.
      if (!nc.isClosed()) await nc.flush();
    })();
    return stopping;
  }

  return {
    async enqueue({ queue, id, payload }: JobEnqueue): Promise<void> {
      assertUsable(queue);
      const job: JobEnvelope = { id, queue, payload, createdAt: clock.now() };
      const published = (async () => {
        await ready();
        await js.publish(topology.jobSubject(queue), JSON.stringify(job), { msgID: id });
      })();
      publishes.add(published);
      try {
        await published;
      } catch (err) {
        throw natsError(`job ${id} not queued`, err);
      } finally {
        publishes.delete(published);
      }
    },

    async consume({ queue, handler, options: queueOptions }: QueueConsume): Promise<void> {
      assertUsable(queue);
      if (stopping !== undefined) throw new InternalError('work queue stopped consuming');
      if (runtimes.has(queue)) throw new InternalError(`queue ${queue} is already consumed by this work queue`);
      const { jsm, dead } = await ready();
      // Every failure and every allowed crash is a delivery; one more lets a consumer file a job
      // whose last allowed delivery crashed too.
      await ensureQueueConsumer(jsm, topology, queue, {
        ackWaitMs,
        maxDeliver: maxDeliver + maxCrashedDeliveries + 1,
        maxAckPending: options.maxAckPending ?? 10_000,
      });
      const rt: QueueRuntime = {
        name: queue,
        handler,
        dispatcher: new KeyedDispatcher<Delivery>(queueOptions, (delivery) => run(rt, delivery)),
        held: new Set(),
        capacity: queueOptions.concurrency + (options.prefetch ?? Math.max(queueOptions.concurrency * 4, 256)),
        stopped: false,
      };
      runtimes.set(queue, rt);
      rt.heartbeat = startHeartbeat(rt, ackWaitMs);
      rt.advisory = dead.watchMaxDeliveries(nc, queue, () => clock.now());
      rt.loop = pull(rt, queueOptions).catch((err: unknown) => {
        logger.error({ err, queue }, 'consumer stopped');
      });
    },

    async deadLetters(): Promise<StoredJob[]> {
      const { dead } = await ready();
      return dead.list();
    },

    async replay(id: string): Promise<boolean> {
      assertUsable();
      const { dead } = await ready();
      return dead.replay(id, clock.now());
    },

    stopConsuming,

    async close(): Promise<void> {
      await stopConsuming();
      closed = true;
      // Publishes under way get their PubAck (or fail to their callers) before close resolves.
      while (publishes.size > 0) await Promise.allSettled([...publishes]);
    },

    stats(): Record<string, QueueStats> {
      const out: Record<string, QueueStats> = {};
      // JetStream holds retries server-side: nothing is "delayed" in this process.
      for (const rt of runtimes.values()) out[rt.name] = statsOf(rt.dispatcher, 0);
      return out;
    },
  };
}
