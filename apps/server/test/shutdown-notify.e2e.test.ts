/**
 * SIGTERM to the embedded server (the real `npm start` entry) in the middle of a burst of
 * sends to offline users (shutdown-burst-scenario.ts): after the restart every notification
 * window and every after-send call goes out, exactly the windows expected, no dead letters.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboxKey } from '@seqline/core';
import { issueAdminToken } from '@seqline/protocol';
import { openEmbeddedEngine } from '@seqline/store';
import { startHookReceiver } from '@seqline/testing';
import { it } from 'vitest';
import { ChildServer, freePort } from './child-server.ts';
import { SECRET } from './harness.ts';
import { LONG_WINDOW_MS, runShutdownBurst, SHORT_WINDOW_MS, SHUTDOWN_HOOK_SECRET, shutdownHookEnv } from './shutdown-burst-scenario.ts';

// Two threads: the senders' and members' inboxes spread over both owners, each thread flushes its
// own windows, and the stop runs every step on both threads before the next.
it.each([1, 2])(
  'a graceful stop mid-burst loses no notification window and no after-send call (%i thread(s))',
  async (threads) => {
    const env = (windowMs: number) => ({ ...shutdownHookEnv(receiver, windowMs), SEQLINE_THREADS: String(threads) });
    const receiver = await startHookReceiver({ secret: SHUTDOWN_HOOK_SECRET });
    const dataDir = await mkdtemp(join(tmpdir(), 'seqline-shutdown-'));
    const port = await freePort();
    let server = new ChildServer(port, dataDir, env(LONG_WINDOW_MS));
    const adminToken = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
    try {
      await server.start();
      await runShutdownBurst({
        url: () => server.url,
        tenant: 'default',
        receiver,
        stop: () => server.terminate(),
        start: async () => {
          server = new ChildServer(port, dataDir, env(SHORT_WINDOW_MS));
          await server.start();
        },
        adminUrl: () => `http://127.0.0.1:${port}`,
        offlineMembers: 600,
        heads: async (users) => {
          const engine = await openEmbeddedEngine({ dir: join(dataDir, 'db') });
          try {
            return new Map(await Promise.all(users.map(async (u) => [u, await engine.timeline.headSeq(inboxKey('default', u))] as const)));
          } finally {
            await engine.close();
          }
        },
        fanoutBacklog: async () => {
          const res = await fetch(`http://127.0.0.1:${port}/v1/admin/queues`, { headers: { authorization: `Bearer ${adminToken}` } });
          const { queues } = (await res.json()) as { queues: Record<string, { running: number; waiting: number }> };
          return Object.entries(queues)
            .filter(([name]) => name.startsWith('fanout.'))
            .reduce((n, [, q]) => n + q.running + q.waiting, 0);
        },
      });
    } finally {
      await server.kill9();
      await receiver.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
  180_000,
);
