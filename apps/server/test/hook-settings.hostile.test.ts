/**
 * Hook settings in the embedded server, end to end: the environment's defaults (secret from a
 * file) are what a tenant runs on until an admin sets its own; a tenant secret set through the
 * admin API signs that tenant's hook calls at once; and neither secret appears in any answer
 * or in the process's log output. A start with a bad variable fails naming it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAdminToken } from '@seqline/protocol';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '../src/index.ts';
import { appinfo, SECRET, TestClient } from './harness.ts';

const ENV_SECRET = `env-hook-secret-${randomBytes(10).toString('hex')}`;
const TENANT_SECRET = `tenant-hook-secret-${randomBytes(10).toString('hex')}`;
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Started {
  server: RunningServer;
  logs: string[];
  dir: string;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/** An embedded server on `env`, logging through a real pino whose every line is kept. */
async function start(env: Record<string, string>): Promise<Started> {
  const dir = await mkdtemp(join(tmpdir(), 'seqline-hook-settings-'));
  const logs: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) });
  const config = await loadServerConfig({ PORT: '0', HOST: '127.0.0.1', SEQLINE_DATA_DIR: dir, SEQLINE_SECRET: SECRET, ...env });
  const server = await startEmbeddedServer(config, logger);
  const token = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
  return {
    server,
    logs,
    dir,
    async admin(method, path, body) {
      const res = await fetch(`http://127.0.0.1:${server.port}/v1/admin/${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, text: await res.text() };
    },
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe('hook settings in the embedded server', () => {
  let s: Started;
  let receiver: HookReceiver;
  let secretDir: string;
  const answers: string[] = [];
  beforeAll(async () => {
    receiver = await startHookReceiver({ secret: TENANT_SECRET, mode: { kind: 'answer', answer: () => ({ allow: true }) } });
    secretDir = await mkdtemp(join(tmpdir(), 'seqline-hook-secret-'));
    await writeFile(join(secretDir, 'hook-secret'), `${ENV_SECRET}\n`, { mode: 0o600 });
    s = await start({
      SEQLINE_HOOK_SECRET_FILE: join(secretDir, 'hook-secret'),
      SEQLINE_LOGIN_POLICY: 'one-per-platform',
      SEQLINE_NOTIFY_WINDOW_MS: '250',
    });
  });
  afterAll(async () => {
    await s.stop();
    await receiver.close();
    await rm(secretDir, { recursive: true, force: true });
  });

  it('a tenant without an override runs on the environment defaults, shown redacted', async () => {
    const shown = await s.admin('GET', 'hooks/acme');
    answers.push(shown.text);
    expect(shown.status).toBe(200);
    expect(JSON.parse(shown.text)).toMatchObject({
      tenant: 'acme',
      hooks: { secretSet: true, loginPolicy: 'one-per-platform', notifyWindowMs: 250, sendPolicy: 'open' },
      override: { secretSet: false },
    });
  });

  it("a tenant secret and before-send URL set through the admin API sign that tenant's next send", async () => {
    const set = await s.admin('PUT', 'hooks/acme', { secret: TENANT_SECRET, beforeSendUrl: receiver.url });
    answers.push(set.text);
    expect(set.status).toBe(200);
    expect(JSON.parse(set.text)).toMatchObject({ override: { secretSet: true, beforeSendUrl: receiver.url } });
    const alice = await TestClient.connect(`ws://127.0.0.1:${s.server.port}/v1/ws`, 'alice', 'acme');
    try {
      const sent = await alice.call('send', { appinfo: appinfo(), to: { user: 'bob' }, type: 'text', body: { text: 'hi' } });
      expect(sent).toMatchObject({ ok: true });
      // The receiver checked the call against the tenant's secret (not the environment's).
      const [call] = await receiver.waitForAccepted(1);
      expect(call?.verdict).toEqual({ ok: true });
      expect(call?.json).toMatchObject({ type: 'before_send', tenant: 'acme', from: 'alice' });
      answers.push(JSON.stringify(sent));
    } finally {
      alice.close();
    }
    // Another tenant still runs on the environment's secret and has no before-send hook.
    const other = await s.admin('GET', 'hooks/beta');
    answers.push(other.text);
    expect(JSON.parse(other.text)).toMatchObject({ hooks: { secretSet: true }, override: { secretSet: false } });
    expect(JSON.parse(other.text).hooks).not.toHaveProperty('beforeSendUrl');
  });

  it('no secret in any answer or log line (after setting, using and refusing one)', async () => {
    const refused = await s.admin('PUT', 'hooks/acme', { secret: `${TENANT_SECRET}-but-with-a-bad-key`, nope: 1 });
    expect(refused.status).toBe(400);
    answers.push(refused.text);
    expect(s.logs.length).toBeGreaterThan(5);
    expect(s.logs.some((l) => l.includes('admin: hooks set'))).toBe(true);
    for (const text of [...answers, ...s.logs]) {
      expect(text).not.toContain(ENV_SECRET);
      expect(text).not.toContain(TENANT_SECRET);
    }
  });
});

describe('hook variables at start-up (embedded)', () => {
  it('a hook URL without a secret starts, with a warning that calls go out unsigned', async () => {
    const s = await start({ SEQLINE_AFTER_SEND_URL: 'https://hooks.example.com/after' });
    try {
      const warnings = s.logs.map((l) => JSON.parse(l) as { level: number; msg: string; hooks?: string[] }).filter((r) => r.level === 40);
      expect(warnings).toContainEqual(expect.objectContaining({ msg: expect.stringMatching(/unsigned/), hooks: ['afterSendUrl'] }));
    } finally {
      await s.stop();
    }
  });

  it('the server process exits 1 on a bad hook variable, naming it without its value', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seqline-hook-badenv-'));
    try {
      const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'apps/server/src/main.ts'], {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH,
          PORT: '0',
          SEQLINE_DATA_DIR: dir,
          SEQLINE_NOTIFY_URL: 'https://ops:pa55word-pa55word@push.example.com/',
          SEQLINE_SEND_POLICY: 'friends-only',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(1);
      expect(output).toMatch(/SEQLINE_NOTIFY_URL: credentials in a URL are refused/);
      expect(output).toMatch(/SEQLINE_SEND_POLICY: one of open, shared-group/);
      expect(output).not.toContain('pa55word');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
