/**
 * The NATS work queue keeps the local queue's give-up rule (backoff.ts) as a delivery count:
 * waiting in the stream for a consumer is never failing time, and a job failing continuously is
 * dead-lettered at the attempt whose retry delays since its first failure pass the window.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { silentLogger } from '@seqline/core';
import type { Clock, JobContext } from '@seqline/core';
import { eventually, requireServices, uniqueName } from '@seqline/testing';
import { attemptsSpanning, createNatsWorkQueue, type NatsWorkQueueOptions } from '../src/index.ts';
import { connectNats, deleteStreams, isolatedTopology, probeNats } from './nats-harness.ts';

const probe = await probeNats();
const topology = isolatedTopology();

/** A clock that moves only when told to (the queue stamps createdAt and deadAt with it). */
class ManualClock implements Clock {
  constructor(public t = 1_000_000) {}
  now(): number {
    return this.t;
  }
}

/** Failure records (nats-job-failures.ts) the queue's jobs have in the stream now. */
async function failureRecords(queue: string): Promise<number> {
  const nc = await connectNats('seqline-give-up-records');
  try {
    const subject = `${topology.subjectPrefix}failures.${queue}.>`;
    const info = await (await jetstreamManager(nc)).streams.info(`${topology.streamPrefix}_JOB_FAILURES`, { subjects_filter: subject });
    return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  } finally {
    await nc.close();
  }
}

async function openQueue(name: string, options: Partial<NatsWorkQueueOptions>) {
  const nc = await connectNats(name);
  const wq = createNatsWorkQueue({ nc, logger: silentLogger, ...topology, ...options });
  return {
    wq,
    close: async () => {
      await wq.close();
      await nc.close();
    },
  };
}

if (requireServices(probe, 'NATS give-up window', 'a NATS server', 'start one with scripts/services.sh up or set NATS_URL')) {
  afterAll(() => deleteStreams(topology.streamPrefix));

  describe('nats work queue give-up window', () => {
    it('retries a job accepted 31 minutes before any worker ran it: a failure after the wait is its first, not its last', async () => {
      const clock = new ManualClock();
      const queue = uniqueName('waited');
      const id = `${queue}-job`;
      const tuning = { clock, backoffMs: [100], giveUpAfterMs: 1_000, ackWaitMs: 2_000 };
      const producer = await openQueue('seqline-give-up-producer', tuning);
      await producer.wq.enqueue({ queue, id, payload: { hook: 'after-send' } });
      await producer.close();
      clock.t += 31 * 60_000; // the outage: no consumer anywhere
      const worker = await openQueue('seqline-give-up-worker', tuning);
      try {
        const runs: JobContext[] = [];
        let done = false;
        await worker.wq.consume({
          queue,
          handler: async (_p, ctx) => {
            runs.push(ctx);
            if (ctx.attempt === 1) throw new Error('hook answered HTTP 500');
            done = true;
          },
          options: { concurrency: 1 },
        });
        await eventually(() => expect(done).toBe(true), 10_000);
        expect(runs).toEqual([
          { id, attempt: 1 },
          { id, attempt: 2 },
        ]);
        expect((await worker.wq.deadLetters()).filter((job) => job.queue === queue)).toEqual([]);
        // The failure it recorded is dropped once the job is done.
        await eventually(async () => expect(await failureRecords(queue)).toBe(0), 5_000, 100);
      } finally {
        await worker.close();
      }
    });

    it('dead-letters a job failing continuously at the attempt whose delays since the first failure pass the window', async () => {
      const queue = uniqueName('failing');
      const id = `${queue}-job`;
      const backoffMs = [100, 200];
      const giveUpAfterMs = 1_000;
      const expected = attemptsSpanning(giveUpAfterMs, backoffMs); // 7: delays 100 + 200 × 5 = 1 100 ms > 1 s
      const { wq, close } = await openQueue('seqline-give-up-failing', { backoffMs, giveUpAfterMs, ackWaitMs: 2_000 });
      try {
        const attemptAt: number[] = []; // each attempt fails at once: its start is its failure
        await wq.consume({
          queue,
          handler: async () => {
            attemptAt.push(performance.now());
            throw new Error(`down ${attemptAt.length}`);
          },
          options: { concurrency: 1 },
        });
        await wq.enqueue({ queue, id, payload: null });
        const deadOfQueue = async () => (await wq.deadLetters()).filter((job) => job.queue === queue);
        await eventually(async () => expect((await deadOfQueue()).map((job) => job.id)).toEqual([id]), 15_000, 100);
        expect(expected).toBe(7);
        expect((await deadOfQueue())[0]).toMatchObject({ attempts: expected, lastError: `down ${expected}` });
        expect(attemptAt).toHaveLength(expected);
        // Its last attempt came after it had been failing for more than the window.
        expect(attemptAt[expected - 1]! - attemptAt[0]!).toBeGreaterThan(giveUpAfterMs);
      } finally {
        await close();
      }
    });
  });
}
