/**
 * `deadletters list|replay --all` with real dead letters: a gateway serving the admin API over
 * an AdminService on a real LMDB engine and local work queue (no client traffic needed).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InternalError, silentLogger } from '@seqline/core';
import { createLocalWorkQueue, type LocalWorkQueue } from '@seqline/bus';
import { createGateway, type Gateway } from '@seqline/gateway';
import { AdminService, LiveSettings, type Messaging } from '@seqline/messaging';
import { createAdminTokenVerifier, createTokenVerifier, issueAdminToken } from '@seqline/protocol';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { runCli } from './cli-harness.ts';

const SECRET = 'deadletters-e2e-secret-0123456789';

/** This gateway serves only the admin API: every client op fails loudly if reached. */
const noMessaging = new Proxy(
  {},
  {
    get: () => () => {
      throw new InternalError('no messaging in this test');
    },
  },
) as Messaging;

let dir: string;
let engine: EmbeddedEngine;
let live: LiveSettings;
let queue: LocalWorkQueue;
let gateway: Gateway;
let cli: (...args: string[]) => ReturnType<typeof runCli>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'seqline-deadletters-'));
  engine = await openEmbeddedEngine({ dir });
  live = await LiveSettings.start({ store: engine.settings, logger: silentLogger });
  queue = createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger });
  const service = new AdminService({
    settings: live,
    timeline: engine.timeline,
    groups: engine.groups,
    groupStreams: engine.groupStreams,
    queue,
    jobs: engine.jobs,
    readFanout: true,
    logger: silentLogger,
  });
  gateway = await createGateway({
    port: 0,
    host: '127.0.0.1',
    transport: 'ws',
    messaging: noMessaging,
    logger: silentLogger,
    verifyToken: createTokenVerifier(SECRET),
    admin: { service, verifyAdminToken: createAdminTokenVerifier(SECRET) },
  });
  const token = await issueAdminToken({ secret: SECRET, ttlSeconds: 600 });
  cli = (...args) => runCli(['--url', `http://127.0.0.1:${gateway.port}`, ...args], { SEQLINE_ADMIN_TOKEN: token });
});

afterAll(async () => {
  await gateway.close();
  await queue.close();
  await live.close();
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

describe('seqline-admin deadletters with dead letters', () => {
  it('list shows them; replay --all puts each back on its queue; list is then empty', async () => {
    for (const [i, id] of ['fan/1', 'fan 2', 'rcpt-3'].entries()) {
      await engine.jobs.bury({
        id,
        queue: i < 2 ? 'fanout' : 'receipts',
        payload: { i },
        attempts: 12,
        notBefore: 0,
        createdAt: 1000 + i,
        lastError: `inbox write failed\n(attempt ${i})`,
      });
    }
    const list = await cli('deadletters', 'list');
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+queue\s+attempts\s+created\s+last error$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/)[0])).toEqual(['fan/1', 'fan 2', 'rcpt-3']);
    expect(lines[1]).toMatch(/fanout\s+12\s+1970-01-01T00:00:01\.000Z\s+inbox write failed \(attempt 0\)$/);

    const replay = await cli('deadletters', 'replay', '--all', '--json');
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toEqual({ replayed: ['fan/1', 'fan 2', 'rcpt-3'], missing: [] });
    expect((await engine.jobs.list({})).map((j) => [j.id, j.attempts])).toEqual([
      ['fan/1', 0],
      ['fan 2', 0],
      ['rcpt-3', 0],
    ]);
    expect((await cli('deadletters', 'list')).stdout).toBe('no dead letters\n');
  });

  it('replay ID replays just that one', async () => {
    await engine.jobs.bury({ id: 'only-me', queue: 'fanout', payload: null, attempts: 3, notBefore: 0, createdAt: 5 });
    await engine.jobs.bury({ id: 'not-me', queue: 'fanout', payload: null, attempts: 3, notBefore: 0, createdAt: 6 });
    const r = await cli('deadletters', 'replay', 'only-me');
    expect(r).toMatchObject({ code: 0, stdout: 'replayed 1 dead letter(s)\n' });
    expect((await engine.jobs.listDead()).map((j) => j.id)).toEqual(['not-me']);
  });
});
