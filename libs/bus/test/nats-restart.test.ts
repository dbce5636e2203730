/**
 * I4 across a NATS restart: jobs acknowledged by `enqueue` survive a kill -9 of nats-server,
 * and a consumer on a reconnecting connection finishes them all once the server is back.
 * Runs its own throwaway nats-server (the binary scripts/services.sh installs, or NATS_SERVER_BIN).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SeqlineError, silentLogger } from '@seqline/core';
import { connect } from '@nats-io/transport-node';
import { eventually, freePort } from '@seqline/testing';
import { createNatsWorkQueue, isNatsUnavailable, type NatsWorkQueue, type NatsWorkQueueOptions } from '../src/index.ts';

const binary = process.env.NATS_SERVER_BIN ?? fileURLToPath(new URL('../../../.services/bin/nats-server', import.meta.url));
const available = existsSync(binary);
const required = process.env.REQUIRE_SERVICES === '1';

function startServer(port: number, storeDir: string): ChildProcess {
  return spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], { stdio: 'ignore' });
}

async function kill9(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return; // already gone
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGKILL');
  await exited;
}

describe.skipIf(!available && !required)(`work queue across a nats-server kill -9 (${binary})`, () => {
  it('loses no acknowledged job and finishes them all after the server comes back', async () => {
    await withThrowawayNats({ backoffMs: [200], ackWaitMs: 1_000, maxDeliver: 20 }, async (wq, server) => {
      for (let i = 0; i < 30; i++) await wq.enqueue({ queue: 'fanout', id: `job-${i}`, payload: i });
      const done = new Set<number>();
      await wq.consume({
        queue: 'fanout',
        handler: async (payload) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          done.add(payload as number);
        },
        options: { concurrency: 2 },
      });
      await eventually(() => expect(done.size).toBeGreaterThanOrEqual(5));

      await server.kill9();
      server.start();
      // Enqueue retries until the reconnect: the promise resolves only once the job is stored.
      await eventually(() => wq.enqueue({ queue: 'fanout', id: 'job-30', payload: 30 }), 20_000, 200);
      await eventually(() => expect([...done].sort((a, b) => a - b)).toEqual(Array.from({ length: 31 }, (_, i) => i)), 30_000);
    });
  }, 60_000);
});

describe.skipIf(!available && !required)('enqueue while nats-server is down', () => {
  it('is refused with OVERLOADED (retry later), not INTERNAL, and works again once the server is back', async () => {
    await withThrowawayNats({}, async (wq, server) => {
      await wq.enqueue({ queue: 'fanout', id: 'before', payload: 1 });
      await server.kill9();
      const refused = await wq.enqueue({ queue: 'fanout', id: 'during', payload: 2 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(SeqlineError);
      expect((refused as SeqlineError).code).toBe('OVERLOADED');
      expect(isNatsUnavailable((refused as SeqlineError).cause)).toBe(true);
      server.start();
      await eventually(() => wq.enqueue({ queue: 'fanout', id: 'after', payload: 3 }), 20_000, 200);
    });
  }, 60_000);
});

/** A nats-server of the test's own (a port and a store dir) that it may kill -9 and start again. */
interface ThrowawayServer {
  start(): void;
  kill9(): Promise<void>;
}

/**
 * Runs `body` with a work queue on a throwaway nats-server, then closes the queue and the
 * connection, kills the server and removes its store, whatever `body` did.
 */
async function withThrowawayNats(
  queueOptions: Partial<NatsWorkQueueOptions>,
  body: (wq: NatsWorkQueue, server: ThrowawayServer) => Promise<void>,
): Promise<void> {
  expect(available, `nats-server binary not found at ${binary}`).toBe(true);
  const storeDir = await mkdtemp(join(tmpdir(), 'seqline-nats-'));
  const port = await freePort();
  let child = startServer(port, storeDir);
  const server: ThrowawayServer = {
    start: () => {
      child = startServer(port, storeDir);
    },
    kill9: () => kill9(child),
  };
  const nc = await eventuallyConnect(port);
  const wq = createNatsWorkQueue({ nc, logger: silentLogger, ...queueOptions });
  try {
    await body(wq, server);
  } finally {
    await wq.close().catch(() => undefined);
    await nc.close();
    await kill9(child);
    await rm(storeDir, { recursive: true, force: true });
  }
}

async function eventuallyConnect(port: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await connect({ servers: `nats://127.0.0.1:${port}`, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
