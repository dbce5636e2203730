/**
 * `seqline-admin hooks show|set` and `deadletters list --queue` as the real CLI process against
 * a gateway serving the admin API over a real AdminService on LMDB. Values are checked by the
 * server (bad ones exit 2 and save nothing); the secret comes only from a file or stdin and
 * appears in no CLI output and no server log line.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InternalError, resolveHooks, type Logger, type TenantHooks } from '@seqline/core';
import { createLocalWorkQueue, type LocalWorkQueue } from '@seqline/bus';
import { createGateway, type Gateway } from '@seqline/gateway';
import { AdminService, LiveSettings, type Messaging } from '@seqline/messaging';
import { createAdminTokenVerifier, createTokenVerifier, issueAdminToken, issueToken } from '@seqline/protocol';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { CommanderError } from 'commander';
import { buildProgram } from '../src/index.ts';
import { CliError } from '../src/errors.ts';
import { runCli, type CliResult } from './cli-harness.ts';

const SECRET = 'hooks-cli-secret-0123456789abcdef';
const HOOK_SECRET = `cli-hook-secret-${randomBytes(10).toString('hex')}`;
const ENV_SECRET = `env-hook-secret-${randomBytes(10).toString('hex')}`;
const PROCESS_DEFAULTS: TenantHooks = { secret: ENV_SECRET, loginPolicy: 'one' };
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** This gateway serves only the admin API. */
const noMessaging = new Proxy({}, { get: () => () => Promise.reject(new InternalError('no messaging in this test')) }) as Messaging;

/** Every record, serialized whole (more than pino would write), so nothing escapes the check. */
function capturingLogger(lines: string[], bindings: object = {}): Logger {
  const at = (level: string) => (obj: object, msg?: string) => void lines.push(JSON.stringify({ level, msg, ...bindings, ...obj }));
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => capturingLogger(lines, { ...bindings, ...more }),
  };
}

let dir: string;
let engine: EmbeddedEngine;
let live: LiveSettings;
let queue: LocalWorkQueue;
let gateway: Gateway;
let adminToken: string;
const logs: string[] = [];
const outputs: CliResult[] = [];

async function cli(...args: string[]): Promise<CliResult> {
  const result = await runCli(['--url', `http://127.0.0.1:${gateway.port}`, ...args], { SEQLINE_ADMIN_TOKEN: adminToken });
  outputs.push(result);
  return result;
}

/** The command tree in-process (fast, for the many refusals): exit code and message as main would give them. */
async function cliInProcess(...args: string[]): Promise<CliResult> {
  let stderr = '';
  const program = buildProgram({ writeOut: () => {}, writeErr: (text) => void (stderr += text) });
  let code = 0;
  try {
    await program.parseAsync(['node', 'seqline-admin', '--url', `http://127.0.0.1:${gateway.port}`, '--admin-token', adminToken, ...args]);
  } catch (err) {
    if (err instanceof CommanderError) code = err.exitCode === 0 ? 0 : 2;
    else if (err instanceof CliError) code = err.exitCode;
    else throw err;
    if (!(err instanceof CommanderError)) stderr += (err as Error).message;
  }
  const result = { code, stdout: '', stderr };
  outputs.push(result);
  return result;
}

/** The CLI with `input` on its stdin (runCli's stdin is closed). */
function cliWithStdin(input: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', MAIN, '--url', `http://127.0.0.1:${gateway.port}`, ...args],
      {
        env: { PATH: process.env.PATH, SEQLINE_ADMIN_TOKEN: adminToken },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      outputs.push({ code, stdout, stderr });
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'seqline-hooks-cli-'));
  const logger = capturingLogger(logs);
  engine = await openEmbeddedEngine({ dir: join(dir, 'db'), logger });
  live = await LiveSettings.start({ store: engine.settings, logger });
  queue = createLocalWorkQueue({ jobs: engine.jobs, logger });
  const service = new AdminService({
    settings: live,
    timeline: engine.timeline,
    groups: engine.groups,
    groupStreams: engine.groupStreams,
    queue,
    jobs: engine.jobs,
    readFanout: true,
    logger,
    hooksOf: (tenant) => resolveHooks(PROCESS_DEFAULTS, live.tenantHooks(tenant)),
  });
  gateway = await createGateway({
    port: 0,
    host: '127.0.0.1',
    transport: 'ws',
    messaging: noMessaging,
    logger,
    verifyToken: createTokenVerifier(SECRET),
    admin: { service, verifyAdminToken: createAdminTokenVerifier(SECRET) },
  });
  adminToken = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
  await writeFile(join(dir, 'hook-secret'), `${HOOK_SECRET}\n`, { mode: 0o600 });
});

afterAll(async () => {
  // Nothing the CLI printed, and nothing the server logged, holds a secret.
  expect(outputs.length).toBeGreaterThan(10);
  for (const text of [...outputs.flatMap((o) => [o.stdout, o.stderr]), ...logs]) {
    expect(text).not.toContain(HOOK_SECRET);
    expect(text).not.toContain(ENV_SECRET);
  }
  await gateway.close();
  await queue.close();
  await live.close();
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

describe('seqline-admin hooks', () => {
  afterEach(async () => {
    // Each test starts from no override.
    if (live.tenantHooks('acme') !== undefined) {
      const clear = Object.fromEntries(Object.keys(live.tenantHooks('acme') ?? {}).map((k) => [k, null]));
      await live.update({ hooks: { tenant: 'acme', patch: clear } });
    }
  });

  it('show: the settings in force and where each comes from; --json for scripts', async () => {
    const shown = await cli('hooks', 'show', 'acme');
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toMatch(/^tenant acme \(settings version \d+\)\n/);
    expect(shown.stdout).toMatch(/login-policy\s+one\s+default/);
    expect(shown.stdout).toMatch(/secret\s+set\s+default/);
    expect(shown.stdout).toMatch(/notify-url\s+-\s+default/);
    const json = await cli('hooks', 'show', 'acme', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      tenant: 'acme',
      hooks: { secretSet: true, loginPolicy: 'one' },
      override: { secretSet: false },
    });
  });

  it('set: every flag, the secret from a file; stored as the override and live at once', async () => {
    const flags = {
      '--notify-url': 'https://push.example.com/n',
      '--notify-window-ms': '0',
      '--preview': 'on',
      '--before-send-url': 'http://10.0.0.5:8080/before',
      '--before-send-timeout-ms': '500',
      '--before-send-failure': 'open',
      '--after-send-url': 'https://hooks.example.com/after',
      '--send-policy': 'shared-group',
      '--login-policy': 'one-per-platform',
      '--secret-file': join(dir, 'hook-secret'),
    };
    const set = await cli('hooks', 'set', 'acme', ...Object.entries(flags).flat());
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toMatch(/^hooks updated\n/);
    expect(set.stdout).toMatch(/secret\s+set\s+tenant/);
    expect(set.stdout).toMatch(/preview\s+on\s+tenant/);
    expect(live.tenantHooks('acme')).toEqual({
      secret: HOOK_SECRET,
      notifyUrl: 'https://push.example.com/n',
      notifyWindowMs: 0,
      notifyPreview: true,
      beforeSendUrl: 'http://10.0.0.5:8080/before',
      beforeSendTimeoutMs: 500,
      beforeSendFailure: 'open',
      afterSendUrl: 'https://hooks.example.com/after',
      sendPolicy: 'shared-group',
      loginPolicy: 'one-per-platform',
    });
    const cleared = await cli('hooks', 'set', 'acme', '--clear', 'secret', 'notify-url', 'login-policy', '--json');
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ hooks: { secretSet: true, loginPolicy: 'one' }, override: { secretSet: false } });
    expect(live.tenantHooks('acme')).not.toHaveProperty('secret');
    expect(live.tenantHooks('acme')).not.toHaveProperty('notifyUrl');
  });

  it('--secret-file - reads the secret from stdin', async () => {
    const set = await cliWithStdin(`${HOOK_SECRET}\n`, 'hooks', 'set', 'acme', '--secret-file', '-');
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(live.tenantHooks('acme')?.secret).toBe(HOOK_SECRET);
    expect((await cliWithStdin('', 'hooks', 'set', 'acme', '--secret-file', '-')).code).toBe(2);
  });

  it('refuses bad input with exit 2 (or 1) and saves nothing', async () => {
    await writeFile(join(dir, 'short'), 'short-secret\n');
    const version = live.current().version;
    const bad: Array<[string[], number, RegExp]> = [
      [['--secret', HOOK_SECRET], 2, /unknown option '--secret'/],
      [['--login-policy', 'nobody'], 2, /Allowed choices are all, one-per-platform, one/],
      [['--preview', 'yes'], 2, /Allowed choices are on, off/],
      [['--notify-window-ms', '-1'], 2, /non-negative integer|unknown option/],
      [['--notify-window-ms', '1e3'], 2, /non-negative integer/],
      [['--notify-window-ms', '60001'], 2, /notifyWindowMs: an integer from 0 to 60000/],
      [['--notify-url', 'ftp://files.example.com/'], 2, /must be http\(s\)/],
      [['--notify-url', 'https://u:p@x.example.com/'], 2, /credentials/],
      [['--before-send-timeout-ms', '1'], 2, /beforeSendTimeoutMs/],
      [['--secret-file', join(dir, 'short')], 2, /secret: 16 to 512 characters/],
      [['--secret-file', join(dir, 'missing')], 1, /cannot read .*missing \(ENOENT\)/],
      [['--clear', 'bogus'], 2, /unknown setting "bogus"/],
      [['--notify-url', 'https://x.example.com/', '--clear', 'notify-url'], 2, /both set and cleared/],
      [[], 2, /give at least one setting/],
    ];
    for (const [flags, code, message] of bad) {
      const r = await cliInProcess('hooks', 'set', 'acme', ...flags);
      expect({ flags, code: r.code }).toEqual({ flags, code });
      expect(r.stderr, flags.join(' ')).toMatch(message);
    }
    // The real process too, for the two that carry a secret: exit 2, the secret never printed.
    for (const flags of [
      ['--secret', HOOK_SECRET],
      ['--secret-file', join(dir, 'short'), '--login-policy', 'nobody-at-all'],
    ]) {
      expect((await cli('hooks', 'set', 'acme', ...flags)).code).toBe(2);
    }
    for (const tenant of ['a b', 'x:y', 't'.repeat(65)]) {
      const r = await cliInProcess('hooks', 'set', tenant, '--login-policy', 'one');
      expect({ tenant, code: r.code }).toEqual({ tenant, code: 2 });
      expect(r.stderr).toMatch(/tenant: invalid id/);
    }
    expect(live.current().version).toBe(version);
    expect(live.tenantHooks('acme')).toBeUndefined();
  });

  it('a user token is refused (exit 1) and changes nothing', async () => {
    const userToken = await issueToken({ secret: SECRET, user: 'alice', tenant: 'acme', ttlSeconds: 60 });
    for (const args of [
      ['hooks', 'show', 'acme'],
      ['hooks', 'set', 'acme', '--login-policy', 'one'],
    ]) {
      const r = await runCli(['--url', `http://127.0.0.1:${gateway.port}`, '--admin-token', userToken, ...args]);
      outputs.push(r);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/403/);
    }
    expect(live.tenantHooks('acme')).toBeUndefined();
  });
});

describe('seqline-admin deadletters list --queue', () => {
  it('lists only the dead letters of that queue (hook jobs have their own)', async () => {
    const queues = ['hooks.notify', 'hooks.after-send', 'fanout.small', 'hooks.after-send'];
    for (const [i, q] of queues.entries()) {
      await engine.jobs.bury({ id: `dl-${i}`, queue: q, payload: { i }, attempts: 9, notBefore: 0, createdAt: 1000 + i });
    }
    const afterSend = await cli('deadletters', 'list', '--queue', 'hooks.after-send', '--json');
    expect(afterSend.code).toBe(0);
    expect((JSON.parse(afterSend.stdout) as Array<{ id: string }>).map((d) => d.id)).toEqual(['dl-1', 'dl-3']);
    const notify = await cli('deadletters', 'list', '--queue', 'hooks.notify');
    expect(
      notify.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/\s{2,}/)[0]),
    ).toEqual(['dl-0']);
    expect((await cli('deadletters', 'list', '--queue', 'nope')).stdout).toBe('no dead letters\n');
    expect((JSON.parse((await cli('deadletters', 'list', '--json')).stdout) as unknown[]).length).toBe(4);
  });
});
