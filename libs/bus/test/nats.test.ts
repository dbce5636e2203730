import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxKey, silentLogger } from '@seqline/core';
import type { JobContext, PushMessage, WorkQueue } from '@seqline/core';
import { eventually, pushBusContract, requireServices, uniqueName, workQueueContract } from '@seqline/testing';
import { createNatsPushBus, createNatsWorkQueue } from '../src/index.ts';
import { connectNats, deleteStreams, isolatedTopology, NATS_URL, probeNats } from './nats-harness.ts';

const probe = await probeNats();
const topology = isolatedTopology();
const contractBackoff = [150, 300];

if (requireServices(probe, 'NATS adapters', 'a NATS server', 'start one with scripts/services.sh up or set NATS_URL')) {
  afterAll(() => deleteStreams(topology.streamPrefix));

  // Each open() is a separate connection, like a separate worker process.
  workQueueContract(`nats at ${NATS_URL}`, async () => {
    const nc = await connectNats('seqline-contract');
    const wq = createNatsWorkQueue({ nc, logger: silentLogger, ...topology, backoffMs: contractBackoff, ackWaitMs: 2_000, maxDeliver: 4 });
    return {
      ...wq,
      close: async () => {
        await wq.close();
        await nc.close();
      },
    };
  });

  pushBusContract(`nats at ${NATS_URL}`, async () => {
    const nc = await connectNats('seqline-push-contract');
    const bus = createNatsPushBus(nc);
    return {
      ...bus,
      close: async () => {
        await bus.close();
        await nc.close();
      },
    };
  });

  describe('nats work queue across processes', () => {
    it('redelivers the job of a worker killed mid-handler (kill -9) to another consumer', async () => {
      const ackWaitMs = 1_000;
      const queue = uniqueName('crash');
      const nc = await connectNats('seqline-crash-survivor');
      const limits = { ackWaitMs, maxDeliver: 5, maxCrashedDeliveries: 5 };
      const survivor = createNatsWorkQueue({ nc, logger: silentLogger, ...topology, ...limits });
      try {
        await survivor.enqueue({ queue, id: `${queue}-job`, payload: { group: 'g1' } });
        const worker = startWorker(queue, limits);
        await eventually(() => expect(worker.output()).toContain(`started ${queue}-job 1`), 20_000);

        const runs: JobContext[] = [];
        await survivor.consume({
          queue,
          handler: async (_payload, ctx) => {
            runs.push(ctx);
          },
          options: { concurrency: 2 },
        });
        // The child is alive and keeps its delivery with working(): no redelivery past the ack wait.
        await new Promise((resolve) => setTimeout(resolve, 3 * ackWaitMs));
        expect(runs).toEqual([]);

        expect(await worker.kill()).toBe('SIGKILL');
        await eventually(() => expect(runs).toEqual([{ id: `${queue}-job`, attempt: 2 }]), 10_000);
      } finally {
        await survivor.close();
        await nc.close();
      }
    });

    it('dead-letters, unrun, a job whose deliveries died with their workers past the crash bound', async () => {
      const queue = uniqueName('doomed');
      const id = `${queue}-job`;
      const nc = await connectNats('seqline-doomed-survivor');
      const limits = { ackWaitMs: 500, maxDeliver: 2, maxCrashedDeliveries: 1 };
      const survivor = createNatsWorkQueue({ nc, logger: silentLogger, ...topology, ...limits });
      try {
        await survivor.enqueue({ queue, id, payload: 'x' });
        await killWorkersMidJob(queue, id, limits, 2);
        const runs = await consumeInto(survivor, queue);
        const deadOfQueue = async () => (await survivor.deadLetters()).filter((job) => job.queue === queue);
        await eventually(async () => expect((await deadOfQueue()).map((job) => job.id)).toEqual([id]), 10_000, 100);
        expect((await deadOfQueue())[0]).toMatchObject({ attempts: 2, lastError: expect.stringContaining('without an ack') });
        expect(runs).toEqual([]);
      } finally {
        await survivor.close();
        await nc.close();
      }
    });
  });

  describe('nats work queue: a crashed delivery is not a failed attempt', () => {
    it('a job whose worker dies with it more times than the give-up count still runs, and is not dead-lettered', async () => {
      const queue = uniqueName('survives');
      const id = `${queue}-job`;
      const nc = await connectNats('seqline-crash-count-survivor');
      // Given up after 2 failed attempts; 3 deliveries end with their worker killed (kill -9).
      const limits = { ackWaitMs: 500, maxDeliver: 2, maxCrashedDeliveries: 5 };
      const survivor = createNatsWorkQueue({ nc, logger: silentLogger, ...topology, ...limits });
      try {
        await survivor.enqueue({ queue, id, payload: 'x' });
        await killWorkersMidJob(queue, id, limits, 3);
        const runs = await consumeInto(survivor, queue);
        await eventually(() => expect(runs).toEqual([{ id, attempt: 4 }]), 10_000);
        expect((await survivor.deadLetters()).filter((job) => job.queue === queue)).toEqual([]);
      } finally {
        await survivor.close();
        await nc.close();
      }
    });
  });

  describe('nats push bus across connections', () => {
    it('delivers a push published by one process to the process holding the inbox, and to no other', async () => {
      const [gatewayA, gatewayB, writer] = await Promise.all([connectNats('gw-a'), connectNats('gw-b'), connectNats('writer')]);
      const busA = createNatsPushBus(gatewayA);
      const busB = createNatsPushBus(gatewayB);
      const busW = createNatsPushBus(writer);
      try {
        const tenant = uniqueName('t');
        const alice = inboxKey(tenant, 'alice.smith');
        const bob = inboxKey(tenant, 'bob');
        const gotA: PushMessage[] = [];
        const gotB: PushMessage[] = [];
        busA.subscribe({ inbox: alice, onPush: (m) => gotA.push(m) });
        busA.subscribe({ inbox: alice, onPush: () => {} });
        busB.subscribe({ inbox: bob, onPush: (m) => gotB.push(m) });
        await Promise.all([gatewayA.flush(), gatewayB.flush()]);
        const msg: PushMessage = { inbox: alice, prevSeq: 7, entries: [] };
        busW.publish(msg);
        busW.publish({ inbox: bob, prevSeq: 1, entries: [] });
        await eventually(() => expect(gotA).toEqual([msg]));
        await eventually(() => expect(gotB.map((m) => m.prevSeq)).toEqual([1]));
      } finally {
        await Promise.all([busA.close(), busB.close(), busW.close()]);
        await Promise.all([gatewayA.close(), gatewayB.close(), writer.close()]);
      }
    });
  });
}

/** A worker process (fixtures/nats-worker.ts) that takes deliveries and never finishes them. */
/** Starts a worker process per delivery and kills it (kill -9) once it has started the job. */
async function killWorkersMidJob(queue: string, id: string, limits: WorkerLimits, deliveries: number): Promise<void> {
  for (let delivery = 1; delivery <= deliveries; delivery++) {
    const worker = startWorker(queue, limits);
    await eventually(() => expect(worker.output()).toContain(`started ${id} ${delivery}`), 20_000);
    expect(await worker.kill()).toBe('SIGKILL');
  }
}

/** Consumes the queue here, recording each run. */
async function consumeInto(queue: WorkQueue, name: string): Promise<JobContext[]> {
  const runs: JobContext[] = [];
  await queue.consume({
    queue: name,
    handler: async (_p, ctx) => {
      runs.push(ctx);
    },
    options: { concurrency: 1 },
  });
  return runs;
}

type WorkerLimits = { ackWaitMs: number; maxDeliver: number; maxCrashedDeliveries: number };

function startWorker(queue: string, limits: WorkerLimits) {
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', fileURLToPath(new URL('./fixtures/nats-worker.ts', import.meta.url))],
    {
      env: {
        ...process.env,
        NATS_URL,
        QUEUE: queue,
        STREAM_PREFIX: topology.streamPrefix,
        SUBJECT_PREFIX: topology.subjectPrefix,
        ACK_WAIT_MS: String(limits.ackWaitMs),
        MAX_DELIVER: String(limits.maxDeliver),
        MAX_CRASHED: String(limits.maxCrashedDeliveries),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return {
    output: () => out,
    /** kill -9: no close(), no ack, no goodbye to the server. */
    kill: async () => {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

if (probe.ok) {
  describe('nats work queue names', () => {
    it('accepts dotted queue names (fanout.small) and keeps them apart from similar ones', async () => {
      const nc = await connectNats('seqline-dotted');
      const wq = createNatsWorkQueue({ nc, logger: silentLogger, ...topology, backoffMs: contractBackoff });
      const base = uniqueName('dot');
      const seen: string[] = [];
      try {
        await wq.consume({
          queue: `${base}.small`,
          handler: async (p) => {
            seen.push(`small:${String(p)}`);
          },
          options: { concurrency: 2 },
        });
        await wq.consume({
          queue: `${base}.large`,
          handler: async (p) => {
            seen.push(`large:${String(p)}`);
          },
          options: { concurrency: 2 },
        });
        await wq.enqueue({ queue: `${base}.small`, id: `${base}-1`, payload: 'a' });
        await wq.enqueue({ queue: `${base}.large`, id: `${base}-2`, payload: 'b' });
        await eventually(() => expect(seen.sort()).toEqual(['large:b', 'small:a']));
        await expect(wq.enqueue({ queue: 'bad..name', id: 'x', payload: 1 })).rejects.toThrow(/invalid queue name/);
      } finally {
        await wq.close();
        await nc.close();
      }
    });
  });
}
