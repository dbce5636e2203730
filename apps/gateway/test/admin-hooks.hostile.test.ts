/**
 * `GET|PUT /v1/admin/hooks/:tenant` over a real AdminService on LMDB, with a real pino logger
 * whose output is captured: every bad patch is a typed 400 that saves nothing, only an admin
 * token gets in, and the secret appears in no answer and no log line. A change made here is
 * seen by another process's LiveSettings on the same LMDB environment.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveHooks, type Logger, type TenantHooks } from '@seqline/core';
import { createLocalWorkQueue, type LocalWorkQueue } from '@seqline/bus';
import { AdminService, LiveSettings } from '@seqline/messaging';
import { createAdminTokenVerifier, issueAdminToken } from '@seqline/protocol';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { http, SECRET, startGateway, TRANSPORTS, type Started } from './harness.ts';

/** Unique per run, so finding it anywhere is a leak and not a coincidence. */
const HOOK_SECRET = `hook-secret-${randomBytes(12).toString('hex')}`;
const ENV_SECRET = `env-secret-${randomBytes(12).toString('hex')}`;
/** What the environment would give (parsed by @seqline/runtime hook-defaults in a real start). */
const PROCESS_DEFAULTS: TenantHooks = { secret: ENV_SECRET, notifyUrl: 'https://env.example.com/notify', loginPolicy: 'one' };

interface Fixture {
  engine: EmbeddedEngine;
  live: LiveSettings;
  queue: LocalWorkQueue;
  dir: string;
  logs: string[];
  logger: Logger;
}

async function fixture(): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'seqline-admin-hooks-'));
  const logs: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) });
  const engine = await openEmbeddedEngine({ dir, logger });
  const live = await LiveSettings.start({ store: engine.settings, logger });
  const queue = createLocalWorkQueue({ jobs: engine.jobs, logger });
  return { engine, live, queue, dir, logs, logger };
}

describe.each(TRANSPORTS)('admin hooks API (%s)', (transport) => {
  let f: Fixture;
  let t: Started;
  let adminAuth: Record<string, string>;
  const answers: string[] = [];

  beforeEach(async () => {
    f = await fixture();
    const service = new AdminService({
      settings: f.live,
      timeline: f.engine.timeline,
      groups: f.engine.groups,
      groupStreams: f.engine.groupStreams,
      queue: f.queue,
      readFanout: true,
      logger: f.logger,
      hooksOf: (tenant) => resolveHooks(PROCESS_DEFAULTS, f.live.tenantHooks(tenant)),
    });
    t = await startGateway(transport, { logger: f.logger, admin: { service, verifyAdminToken: createAdminTokenVerifier(SECRET) } });
    adminAuth = { authorization: `Bearer ${await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 })}` };
  });
  afterEach(async () => {
    // Whatever a test did, the secrets it used were never answered nor logged.
    for (const text of [...answers.splice(0), ...f.logs]) {
      expect(text).not.toContain(HOOK_SECRET);
      expect(text).not.toContain(ENV_SECRET);
    }
    await t.gateway.close();
    await f.queue.close();
    await f.live.close();
    await f.engine.close();
    await rm(f.dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown, headers = adminAuth) => {
    const answer = await http(t.httpUrl(path), {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    answers.push(answer.body);
    return { status: answer.status, json: JSON.parse(answer.body) as Record<string, unknown> };
  };

  it('show: process defaults in force, redacted; no override yet', async () => {
    const shown = await call('GET', '/v1/admin/hooks/acme');
    expect(shown).toEqual({
      status: 200,
      json: {
        ok: true,
        tenant: 'acme',
        hooks: {
          secretSet: true,
          notifyUrl: 'https://env.example.com/notify',
          notifyWindowMs: 1000,
          notifyPreview: false,
          beforeSendTimeoutMs: 2000,
          beforeSendFailure: 'closed',
          sendPolicy: 'open',
          loginPolicy: 'one',
        },
        override: { secretSet: false },
        version: 0,
      },
    });
  });

  it('set: stored as the tenant override, live at once, answered redacted; null clears back to the default', async () => {
    const patch = {
      secret: HOOK_SECRET,
      notifyUrl: 'https://push.example.com/n',
      notifyPreview: true,
      beforeSendUrl: 'http://10.0.0.5:8080/before',
      beforeSendTimeoutMs: 300,
      beforeSendFailure: 'open',
      sendPolicy: 'shared-group',
      loginPolicy: 'one-per-platform',
    };
    const set = await call('PUT', '/v1/admin/hooks/acme', patch);
    expect(set.status).toBe(200);
    const { secret: _secret, ...shown } = patch;
    expect(set.json).toMatchObject({ ok: true, tenant: 'acme', override: { ...shown, secretSet: true }, version: 1 });
    expect(set.json['hooks']).toMatchObject({ ...shown, secretSet: true, notifyWindowMs: 1000 });
    // What the code runs on has the secret; the store has it; another tenant is untouched.
    expect(f.live.tenantHooks('acme')?.secret).toBe(HOOK_SECRET);
    expect((await f.engine.settings.load())?.hooks['acme']?.secret).toBe(HOOK_SECRET);
    expect((await call('GET', '/v1/admin/hooks/other')).json['override']).toEqual({ secretSet: false });

    const cleared = await call('PUT', '/v1/admin/hooks/acme', { secret: null, notifyUrl: null, loginPolicy: null });
    expect(cleared.json).toMatchObject({
      hooks: { secretSet: true, notifyUrl: 'https://env.example.com/notify', loginPolicy: 'one' }, // the process defaults again
      override: { secretSet: false, sendPolicy: 'shared-group' },
      version: 2,
    });
    expect(cleared.json['override']).not.toHaveProperty('notifyUrl');
    expect(f.live.tenantHooks('acme')).not.toHaveProperty('secret');
    // Clearing every key drops the tenant from the record.
    await call('PUT', '/v1/admin/hooks/acme', Object.fromEntries(Object.keys(shown).map((k) => [k, null])));
    expect((await f.engine.settings.load())?.hooks).toEqual({});
    // The write is audited by admin name and tenant, never by value.
    const audit = f.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r['msg'] === 'admin: hooks set');
    expect(audit).toHaveLength(3);
    expect(audit[0]).toMatchObject({ admin: 'ops', params: { tenant: 'acme' } });
  });

  it('every invalid patch is a 400 BAD_REQUEST that saves nothing and echoes no secret', async () => {
    await call('PUT', '/v1/admin/hooks/acme', { notifyUrl: 'https://keep.example.com/', secret: HOOK_SECRET });
    const before = await f.engine.settings.load();
    const bad: Array<[string, unknown, RegExp]> = [
      ['unknown key', { notifyURL: 'https://x.example.com/' }, /unknown setting notifyURL/],
      ['prototype key', JSON.parse('{"__proto__": {"secret": "x"}}'), /unknown setting __proto__/],
      ['not a URL', { notifyUrl: 'not a url' }, /notifyUrl: not a URL/],
      ['ftp URL', { afterSendUrl: 'ftp://files.example.com/x' }, /must be http\(s\)/],
      ['javascript URL', { beforeSendUrl: 'javascript:alert(1)' }, /must be http\(s\)/],
      ['credentials in URL', { notifyUrl: 'https://user:pw@x.example.com/' }, /credentials/],
      ['very long URL', { notifyUrl: `https://x.example.com/${'a'.repeat(3000)}` }, /not a URL/],
      ['short secret', { secret: 'short' }, /secret: 16 to 512/],
      ['long secret', { secret: `${HOOK_SECRET}${'z'.repeat(600)}` }, /secret: 16 to 512/],
      ['secret not a string', { secret: 1234567890123456 }, /secret/],
      ['window above range', { notifyWindowMs: 60_001 }, /notifyWindowMs: an integer from 0 to 60000/],
      ['negative window', { notifyWindowMs: -1 }, /notifyWindowMs/],
      ['timeout below range', { beforeSendTimeoutMs: 5 }, /beforeSendTimeoutMs: an integer from 10/],
      ['fractional timeout', { beforeSendTimeoutMs: 100.5 }, /beforeSendTimeoutMs/],
      ['number as text', { notifyWindowMs: '100' }, /notifyWindowMs/],
      ['preview as text', { notifyPreview: 'yes' }, /notifyPreview: true or false/],
      ['unknown failure mode', { beforeSendFailure: 'retry' }, /beforeSendFailure: one of closed, open/],
      ['unknown send policy', { sendPolicy: 'closed' }, /sendPolicy/],
      ['unknown login policy', { loginPolicy: 'none' }, /loginPolicy/],
      ['valid secret beside a bad key', { secret: `${HOOK_SECRET}-2`, sendPolicy: 'nope' }, /sendPolicy/],
      ['an array', [{ notifyUrl: 'https://x.example.com/' }], /hooks: an object/],
      ['a string', '"https://x.example.com/"', /hooks: an object/],
      ['null', 'null', /hooks: an object/],
      ['a number', '42', /hooks: an object/],
      ['not JSON', '{"secret": ', /not valid JSON/],
      ['nothing to change', {}, /nothing to change/],
    ];
    for (const [what, body, message] of bad) {
      const answer = await call('PUT', '/v1/admin/hooks/acme', body);
      expect({ what, status: answer.status }).toEqual({ what, status: 400 });
      expect(answer.json, what).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(message) } });
    }
    for (const tenant of ['a%20b', 'x%3Ay', 'a%2Fb', `${'t'.repeat(200)}`, '%F0%9F%92%A5']) {
      for (const method of ['GET', 'PUT']) {
        const answer = await call(method, `/v1/admin/hooks/${tenant}`, method === 'PUT' ? { loginPolicy: 'one' } : undefined);
        expect({ tenant, method, status: answer.status }).toEqual({ tenant, method, status: 400 });
        expect(answer.json).toMatchObject({ error: { code: 'BAD_REQUEST', message: expect.stringMatching(/tenant/) } });
      }
    }
    expect(await f.engine.settings.load()).toEqual(before);
    expect(f.live.current().version).toBe(1);
  });

  it('refuses missing, forged, expired and user tokens (401/403) and saves nothing', async () => {
    const forged = await issueAdminToken({ secret: 'some-other-secret-0123456789', ttlSeconds: 60 });
    const expired = await issueAdminToken({ secret: SECRET, ttlSeconds: 60, now: Date.now() - 3_600_000 });
    const cases: Array<[Record<string, string>, number, string]> = [
      [{}, 401, 'UNAUTHORIZED'],
      [{ authorization: `Bearer ${forged}` }, 401, 'UNAUTHORIZED'],
      [{ authorization: `Bearer ${expired}` }, 401, 'UNAUTHORIZED'],
      [{ authorization: `Bearer ${await t.token('alice', 'acme')}` }, 403, 'FORBIDDEN'],
    ];
    for (const [headers, status, code] of cases) {
      for (const method of ['GET', 'PUT']) {
        const body = method === 'PUT' ? { secret: HOOK_SECRET, notifyUrl: 'https://evil.example.com/' } : undefined;
        const answer = await call(method, '/v1/admin/hooks/acme', body, headers);
        expect({ method, status: answer.status, code: (answer.json['error'] as { code?: string } | undefined)?.code }).toEqual({
          method,
          status,
          code,
        });
        expect(answer.json).not.toHaveProperty('hooks');
      }
    }
    expect(await f.engine.settings.load()).toBeNull();
    expect(f.live.tenantHooks('acme')).toBeUndefined();
  });

  it('a replayed PUT changes nothing more than the first', async () => {
    const body = { notifyUrl: 'https://push.example.com/n', secret: HOOK_SECRET };
    const first = await call('PUT', '/v1/admin/hooks/acme', body);
    const again = await call('PUT', '/v1/admin/hooks/acme', body);
    expect(again.status).toBe(200);
    expect({ ...again.json, version: 0 }).toEqual({ ...first.json, version: 0 });
    expect((await f.engine.settings.load())?.hooks).toEqual({ acme: body });
  });
});

describe('admin hooks across processes (embedded)', () => {
  it("a change made through this process's admin API is seen by another process's LiveSettings on the same LMDB", async () => {
    const f = await fixture();
    const service = new AdminService({
      settings: f.live,
      timeline: f.engine.timeline,
      groups: f.engine.groups,
      groupStreams: f.engine.groupStreams,
      queue: f.queue,
      readFanout: true,
      logger: f.logger,
    });
    const t = await startGateway('ws', { logger: f.logger, admin: { service, verifyAdminToken: createAdminTokenVerifier(SECRET) } });
    try {
      // The other process watches the environment's settings until acme's override appears.
      const script = `
        import { silentLogger } from '@seqline/core';
        import { LiveSettings } from '@seqline/messaging';
        import { openEmbeddedEngine } from '@seqline/store';
        const engine = await openEmbeddedEngine({ dir: ${JSON.stringify(f.dir)} });
        const live = await LiveSettings.start({ store: engine.settings, logger: silentLogger, pollMs: 25 });
        process.stdout.write('watching\\n');
        const deadline = Date.now() + 10_000;
        while (live.tenantHooks('acme')?.notifyUrl === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        const seen = live.tenantHooks('acme') ?? {};
        process.stdout.write(JSON.stringify({ notifyUrl: seen.notifyUrl, loginPolicy: seen.loginPolicy, secretMatches: seen.secret === process.env.EXPECTED }));
        await live.close();
        await engine.close();
      `;
      const child = execFile(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: process.cwd(),
        env: { ...process.env, EXPECTED: HOOK_SECRET },
      });
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      while (!out.includes('watching')) await new Promise((r) => setTimeout(r, 20));
      const admin = `Bearer ${await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 60 })}`;
      const put = await http(t.httpUrl('/v1/admin/hooks/acme'), {
        method: 'PUT',
        headers: { authorization: admin, 'content-type': 'application/json' },
        body: JSON.stringify({ notifyUrl: 'https://push.example.com/n', loginPolicy: 'one', secret: HOOK_SECRET }),
      });
      expect(put.status).toBe(200);
      expect(await exited).toBe(0);
      expect(JSON.parse(out.slice(out.indexOf('{')))).toEqual({
        notifyUrl: 'https://push.example.com/n',
        loginPolicy: 'one',
        secretMatches: true,
      });
      for (const line of f.logs) expect(line).not.toContain(HOOK_SECRET);
    } finally {
      await t.gateway.close();
      await f.queue.close();
      await f.live.close();
      await f.engine.close();
      await rm(f.dir, { recursive: true, force: true });
    }
  });
});
