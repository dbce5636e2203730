/**
 * The offline notifier on the distributed work queue across a NATS outage: a window that closes
 * while nats-server is gone (kill -9) has its enqueue fail, and is stored — exactly once — when
 * the server is back, as a worker composes them (messaging-deps.ts). Runs its own throwaway
 * nats-server (the binary scripts/services.sh installs, or NATS_SERVER_BIN), never the shared one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createNatsWorkQueue } from '@seqline/bus';
import { inboxKey, resolveHooks, silentLogger, type Entry, type JobEnqueue } from '@seqline/core';
import { OFFLINE_NOTIFY_QUEUE, OfflineNotifier, type OfflineNotifyJob } from '@seqline/messaging';
import { eventually, freePort } from '@seqline/testing';

const binary = process.env.NATS_SERVER_BIN ?? fileURLToPath(new URL('../../../.services/bin/nats-server', import.meta.url));
const available = existsSync(binary);
const required = process.env.REQUIRE_SERVICES === '1';

describe.skipIf(!available && !required)(`offline notifications across a kill -9 of nats-server (${binary})`, () => {
  it('a window closing while NATS is down is stored once the server is back: exactly one job, none lost', async () => {
    const storeDir = await mkdtemp(join(tmpdir(), 'seqline-notify-nats-'));
    const port = await freePort();
    let server = startServer(port, storeDir);
    const nc = await eventuallyConnect(port);
    const wq = createNatsWorkQueue({ nc, logger: silentLogger });
    let failedAttempts = 0;
    const queue = {
      enqueue: (input: JobEnqueue) =>
        wq.enqueue(input).catch((err: unknown) => {
          failedAttempts++;
          throw err;
        }),
    };
    const notifier = new OfflineNotifier({
      queue,
      hooks: { of: () => resolveHooks({}, { notifyUrl: 'http://127.0.0.1:9/n', notifyWindowMs: 50 }) },
      presence: { isOnline: () => false },
      logger: silentLogger,
      retryBackoff: { initialMs: 100, maxMs: 500 },
    });
    try {
      await wq.enqueue({ queue: 'warmup', id: 'warmup', payload: 1 }); // the streams exist before the outage
      await kill9(server);
      const entries: Entry[] = [1, 2].map((seq) => ({
        seq,
        kind: 'msg',
        appinfo: `a${seq}`,
        conv: { type: 'user', id: 'alice' },
        from: 'alice',
        sendTime: 1,
      }));
      notifier.listener(inboxKey('t', 'bob'), entries);
      // Its window closes into the outage: the publish fails (nats.js's request timeout, 5 s).
      await eventually(() => expect(failedAttempts).toBeGreaterThanOrEqual(1), 15_000);
      server = startServer(port, storeDir);
      const subject = `jobs.${OFFLINE_NOTIFY_QUEUE}`;
      const jobsStored = async () => {
        const jsm = await jetstreamManager(nc);
        return (await jsm.streams.info('SEQLINE_JOBS', { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
      };
      await eventually(async () => expect(await jobsStored()).toBeGreaterThanOrEqual(1), 30_000, 200);
      await eventually(() => expect(notifier.stats()).toMatchObject({ enqueued: 1, retrying: 0, heldItems: 0, failed: 0 }));
      await nc.flush(); // every publish the client made has reached the server
      expect(await jobsStored()).toBe(1);
      const jsm = await jetstreamManager(nc);
      const stored = JSON.parse(
        new TextDecoder().decode((await jsm.streams.getMessage('SEQLINE_JOBS', { last_by_subj: subject }))!.data),
      ) as {
        id: string;
        payload: OfflineNotifyJob;
      };
      expect(stored.id).toBe('offline-notify:t:bob:1:2');
      expect(stored.payload.entries.map((e) => e.seq)).toEqual([1, 2]);
    } finally {
      await notifier.close();
      await wq.close().catch(() => undefined);
      await nc.close();
      await kill9(server);
      await rm(storeDir, { recursive: true, force: true });
    }
  }, 60_000);
});

function startServer(port: number, storeDir: string): ChildProcess {
  return spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], { stdio: 'ignore' });
}

async function kill9(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGKILL');
  await exited;
}

async function eventuallyConnect(port: number): Promise<NatsConnection> {
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
