/**
 * The admin HTTP API over a real AdminService: LMDB engine, LiveSettings, local work queue.
 * Checks auth (401/403/200), every route, and the error shapes shared with the client API.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { groupKey, inboxKey, silentLogger, type Entry } from '@seqline/core';
import { createLocalWorkQueue, type LocalWorkQueue } from '@seqline/bus';
import { AdminJobs, AdminService, LiveSettings } from '@seqline/messaging';
import { createAdminTokenVerifier, issueAdminToken } from '@seqline/protocol';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { http, SECRET, startGateway, TRANSPORTS, type Started } from './harness.ts';

interface Fixture {
  engine: EmbeddedEngine;
  live: LiveSettings;
  queue: LocalWorkQueue;
  dir: string;
}

async function fixture(): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'seqline-admin-api-'));
  const engine = await openEmbeddedEngine({ dir });
  const live = await LiveSettings.start({ store: engine.settings, logger: silentLogger });
  const queue = createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger });
  return { engine, live, queue, dir };
}

function msg(seq: number): Entry {
  return {
    seq,
    kind: 'msg',
    appinfo: `a${seq}`,
    conv: { type: 'user', id: 'bob' },
    from: 'bob',
    sendTime: 1_700_000_000_000 + seq,
    type: 'text',
    body: { text: `m${seq}` },
  };
}

describe.each(TRANSPORTS)('admin HTTP API (%s)', (transport) => {
  let f: Fixture;
  let t: Started;
  let adminAuth: Record<string, string>;

  beforeEach(async () => {
    f = await fixture();
    const service = new AdminService({
      settings: f.live,
      timeline: f.engine.timeline,
      groups: f.engine.groups,
      groupStreams: f.engine.groupStreams,
      queue: f.queue,
      queueStats: () => f.queue.stats(),
      jobs: f.engine.jobs,
      readFanout: true,
      logger: silentLogger,
      // Stands in for Workers.stats().pools: reads the live limits as the real pools do.
      poolStats: () => ({
        large: { running: 0, waiting: 0, poolLimit: f.live.limits().largePool, perGroupLimit: f.live.limits().largeGroupConcurrency },
      }),
    });
    t = await startGateway(transport, { admin: { service, verifyAdminToken: createAdminTokenVerifier(SECRET) } });
    adminAuth = { authorization: `Bearer ${await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 })}` };
  });
  afterEach(async () => {
    await t.gateway.close();
    await f.queue.close();
    await f.live.close();
    await f.engine.close();
    await rm(f.dir, { recursive: true, force: true });
  });

  const json = (body: string) => JSON.parse(body) as Record<string, unknown>;
  const get = (path: string, headers = adminAuth) => http(t.httpUrl(path), { headers });
  const send = (method: string, path: string, body: unknown, headers = adminAuth) =>
    http(t.httpUrl(path), {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('auth: none or invalid → 401, a user token → 403, an admin token → 200', async () => {
    const cases: Array<[Record<string, string>, number, string | undefined]> = [
      [{}, 401, 'UNAUTHORIZED'],
      [{ authorization: 'Bearer nope' }, 401, 'UNAUTHORIZED'],
      [
        { authorization: `Bearer ${await issueAdminToken({ secret: 'some-other-secret-0123456789', ttlSeconds: 60 })}` },
        401,
        'UNAUTHORIZED',
      ],
      [
        { authorization: `Bearer ${await issueAdminToken({ secret: SECRET, ttlSeconds: 60, now: Date.now() - 3_600_000 })}` },
        401,
        'UNAUTHORIZED',
      ],
      [{ authorization: `Bearer ${await t.token('alice')}` }, 403, 'FORBIDDEN'],
      [adminAuth, 200, undefined],
    ];
    for (const [headers, status, code] of cases) {
      for (const [method, path] of [
        ['GET', '/v1/admin/limits'],
        ['PUT', '/v1/admin/limits'],
      ] as const) {
        const answer = method === 'GET' ? await get(path, headers) : await send(method, path, { smallPool: 3 }, headers);
        expect({ method, status: answer.status }).toEqual({ method, status });
        if (code) expect(json(answer.body)).toMatchObject({ ok: false, error: { code } });
      }
    }
    // Only the last (admin) PUT changed anything.
    expect(f.live.current().version).toBe(1);
  });

  it('an admin token is not accepted in the query string, nor as a user token', async () => {
    const token = adminAuth.authorization?.slice('Bearer '.length) ?? '';
    expect((await get(`/v1/admin/tiers?token=${token}`, {})).status).toBe(401);
    expect((await get('/v1/sync?maxSeq=0', adminAuth)).status).toBe(401);
  });

  it('tiers: show, set (merged with the stored values), validation errors are 400', async () => {
    const shown = await get('/v1/admin/tiers');
    expect(json(shown.body)).toEqual({
      ok: true,
      tiers: { smallBelow: 100, largeBelow: 2000, maxMembers: 10_000, hysteresis: 0.1 },
      version: 0,
    });
    const set = await send('PUT', '/v1/admin/tiers', { maxMembers: 100_000, hysteresis: 0.2 });
    expect(set.status).toBe(200);
    expect(json(set.body)).toEqual({
      ok: true,
      tiers: { smallBelow: 100, largeBelow: 2000, maxMembers: 100_000, hysteresis: 0.2 },
      version: 1,
    });
    expect(f.live.tiers().maxMembers).toBe(100_000);
    const bad: Array<[unknown, RegExp]> = [
      [{ smallBelow: 3000 }, /smallBelow \(3000\) must be below largeBelow/],
      [{ maxMembers: 200_000 }, /must not exceed 100000/],
      [{ hysteresis: 1.5 }, /hysteresis/],
      [{ smallBelow: '50' }, /smallBelow must be a number/],
      [{ small: 50 }, /unknown field small/],
      [{}, /nothing to change/],
      [[1], /JSON object/],
      ['{oops', /not valid JSON/],
    ];
    for (const [body, message] of bad) {
      const answer = await send('PUT', '/v1/admin/tiers', body);
      expect(answer.status).toBe(400);
      const error = json(answer.body).error as { code: string; message: string };
      expect(error.code).toBe('BAD_REQUEST');
      expect(error.message).toMatch(message);
    }
    expect(f.live.current().version).toBe(1);
  });

  it('limits: show and set apply live; queues and pools report the bounds in force', async () => {
    await f.queue.consume({ queue: 'fanout', handler: async () => {}, options: { concurrency: 4 } });
    expect(json((await get('/v1/admin/queues')).body)).toEqual({
      ok: true,
      queues: { fanout: { running: 0, waiting: 0, delayed: 0 } },
      pools: { large: { running: 0, waiting: 0, poolLimit: 8, perGroupLimit: 5 } },
    });
    const set = await send('PUT', '/v1/admin/limits', { largeGroupConcurrency: 2, largePool: 12 });
    expect(json(set.body)).toMatchObject({ ok: true, limits: { largeGroupConcurrency: 2, largePool: 12, smallPool: 16 }, version: 1 });
    expect(json((await get('/v1/admin/limits')).body)).toMatchObject({ limits: { largeGroupConcurrency: 2 }, version: 1 });
    expect(json((await get('/v1/admin/queues')).body)).toMatchObject({ pools: { large: { poolLimit: 12, perGroupLimit: 2 } } });
    const bad = await send('PUT', '/v1/admin/limits', { perUserInFlight: 5000 });
    expect(bad.status).toBe(400);
    expect(json(bad.body)).toMatchObject({ error: { code: 'BAD_REQUEST', message: expect.stringMatching(/perUserInFlight/) } });
  });

  it('groups/:tenant/:id: tier, members (paged), head, pending jobs of the group', async () => {
    const key = groupKey('acme', 'team');
    const members = Array.from({ length: 150 }, (_, i) => `u${String(i).padStart(3, '0')}`);
    await f.engine.groups.createGroup({
      group: { key, tenant: 'acme', id: 'team', name: 'Team', admin: 'u000', tier: 'large', memberCount: 150, createdAt: 1 },
      members,
      at: { time: 1, gseq: 0 },
    });
    await f.queue.enqueue({ queue: 'fanout', id: 'job-1', payload: { tenant: 'acme', groupKey: key, entry: null, recipients: [] } });
    await f.queue.enqueue({
      queue: 'fanout',
      id: 'job-2',
      payload: { tenant: 'acme', groupKey: 'acme:other', entry: null, recipients: [] },
    });
    const answer = json((await get('/v1/admin/groups/acme/team?memberLimit=10')).body);
    expect(answer).toMatchObject({
      ok: true,
      tenant: 'acme',
      id: 'team',
      name: 'Team',
      tier: 'large',
      naturalTier: 'large',
      fanout: 'write',
      memberCount: 150,
      membersTruncated: true,
      headGseq: 0,
      queue: { pendingForGroup: 1 },
    });
    expect(answer.members).toEqual(members.slice(0, 10));
    const page = json((await get('/v1/admin/groups/acme/team?memberLimit=100&membersAfter=u099')).body);
    expect(page.members).toEqual(members.slice(100));
    expect(page.membersTruncated).toBe(false);
    expect((await get('/v1/admin/groups/acme/nope')).status).toBe(404);
    expect((await get('/v1/admin/groups/acme/bad%3Aid')).status).toBe(400);
    expect((await get('/v1/admin/groups/acme/team?memberLimit=0')).status).toBe(400);
  });

  it('inbox/:tenant/:user?after=N&limit=M', async () => {
    await f.engine.timeline.append({ inbox: inboxKey('acme', 'bob'), entries: [msg(1), msg(2), msg(3), msg(4)] });
    const answer = json((await get('/v1/admin/inbox/acme/bob?after=1&limit=2')).body);
    expect(answer).toMatchObject({ ok: true, tenant: 'acme', user: 'bob', headSeq: 4, hasMore: true });
    expect((answer.entries as Entry[]).map((e) => e.seq)).toEqual([2, 3]);
    const rest = json((await get('/v1/admin/inbox/acme/bob?after=3')).body);
    expect((rest.entries as Entry[]).map((e) => e.seq)).toEqual([4]);
    expect(rest.hasMore).toBe(false);
    expect(json((await get('/v1/admin/inbox/acme/nobody')).body)).toMatchObject({ entries: [], headSeq: 0, hasMore: false });
    for (const query of ['after=-1', 'after=x', 'limit=0', 'limit=100000']) {
      expect((await get(`/v1/admin/inbox/acme/bob?${query}`)).status).toBe(400);
    }
  });

  it('jobs?queue=Q&limit=N: the pending jobs of a queue (a retrying one too), oldest first; bad input is 400', async () => {
    expect(json((await get('/v1/admin/jobs?queue=hooks.notify')).body)).toEqual({ ok: true, queue: 'hooks.notify', pending: 0, jobs: [] });
    for (const id of ['n1', 'n2', 'n3']) await f.queue.enqueue({ queue: 'hooks.notify', id, payload: { user: id } });
    await f.queue.enqueue({ queue: 'fanout', id: 'f1', payload: { n: 1 } });
    // A failed attempt waiting out its backoff is still pending.
    const [first] = await f.engine.jobs.list({ queue: 'hooks.notify' });
    if (!first) throw new Error('n1 not stored');
    await f.engine.jobs.update({ ...first, attempts: 1, notBefore: first.createdAt + 60_000, lastError: 'hook answered 500' });
    const answer = json((await get('/v1/admin/jobs?queue=hooks.notify&limit=2')).body);
    expect(answer).toMatchObject({ ok: true, queue: 'hooks.notify', pending: 3 });
    expect(answer.jobs).toEqual([
      expect.objectContaining({ id: 'n1', queue: 'hooks.notify', attempts: 1, lastError: 'hook answered 500', payload: { user: 'n1' } }),
      expect.objectContaining({ id: 'n2', attempts: 0, notBefore: expect.any(Number) as number }),
    ]);
    expect(json((await get('/v1/admin/jobs')).body)).toMatchObject({ queue: null, pending: 4 });
    for (const query of ['queue=', 'queue=a%2Fb', 'limit=0', 'limit=100000', 'limit=x']) {
      const bad = await get(`/v1/admin/jobs?${query}`);
      expect({ query, status: bad.status }).toEqual({ query, status: 400 });
      expect(json(bad.body)).toMatchObject({ error: { code: 'BAD_REQUEST' } });
    }
    expect((await send('POST', '/v1/admin/jobs', {})).status).toBe(405);
    // Where the jobs are not in a store this process can list (distributed mode), the count is unknown.
    expect(await new AdminJobs({}).pending({ queue: 'hooks.notify', limit: 1 })).toEqual({
      queue: 'hooks.notify',
      pending: null,
      jobs: [],
    });
  });

  it('deadletters: list, replay one (404 when absent), replay all', async () => {
    expect(json((await get('/v1/admin/deadletters')).body)).toEqual({ ok: true, deadLetters: [] });
    for (const id of ['d1', 'd/2']) {
      await f.engine.jobs.bury({ id, queue: 'fanout', payload: { n: 1 }, attempts: 9, notBefore: 0, createdAt: 5, lastError: 'boom' });
    }
    const listed = json((await get('/v1/admin/deadletters')).body).deadLetters as Array<Record<string, unknown>>;
    expect(listed.map((d) => d.id).sort()).toEqual(['d/2', 'd1']);
    expect(listed[0]).toMatchObject({ queue: 'fanout', attempts: 9, lastError: 'boom', payload: { n: 1 } });
    const one = await send('POST', `/v1/admin/deadletters/${encodeURIComponent('d/2')}/replay`, '');
    expect(json(one.body)).toEqual({ ok: true, replayed: ['d/2'], missing: [] });
    expect((await f.engine.jobs.list({})).map((j) => j.id)).toEqual(['d/2']);
    const again = await send('POST', `/v1/admin/deadletters/${encodeURIComponent('d/2')}/replay`, '');
    expect(again.status).toBe(404);
    expect((await send('POST', '/v1/admin/deadletters/replay', {})).status).toBe(400);
    const all = await send('POST', '/v1/admin/deadletters/replay', { all: true });
    expect(json(all.body)).toEqual({ ok: true, replayed: ['d1'], missing: [] });
    expect(json((await get('/v1/admin/deadletters')).body).deadLetters).toEqual([]);
  });

  it('unknown admin routes are 404, a wrong method is 405 with Allow', async () => {
    expect((await get('/v1/admin/nothing')).status).toBe(404);
    const wrong = await send('POST', '/v1/admin/tiers', {});
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, PUT');
    expect(json(wrong.body)).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
  });
});

describe('admin HTTP API not mounted', () => {
  it('a gateway without the admin option has no admin routes', async () => {
    const t = await startGateway('ws');
    try {
      const token = await issueAdminToken({ secret: SECRET, ttlSeconds: 60 });
      const answer = await http(t.httpUrl('/v1/admin/tiers'), { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(404);
    } finally {
      await t.gateway.close();
    }
  });
});
