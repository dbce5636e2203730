/**
 * The hook variables of the environment: read by one parser for both modes, checked by core's
 * hook rules, every bad one named in a ConfigError that never repeats a value; the secret may
 * come from a file. A gateway process with a bad value does not start.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, type Logger } from '@seqline/core';
import { loadDistributedConfig, parseHookDefaults, warnUnsignedHooks } from '../src/index.ts';

const SECRET = 'hook-secret-0123456789-abcdef';
const BASE = { SEQLINE_SECRET: 'a-secret-of-16-chars' };
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GATEWAY_MAIN = join(REPO_ROOT, 'apps/gateway/src/main.ts');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'seqline-hook-env-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The ConfigError's message (the test fails if parsing succeeds). */
function failure(env: NodeJS.ProcessEnv): string {
  try {
    parseHookDefaults(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(Object.keys(env))}`);
}

describe('hook defaults from the environment', () => {
  it('reads every variable into the settings core validates; unset and empty mean no default', () => {
    expect(parseHookDefaults({})).toEqual({});
    expect(parseHookDefaults({ SEQLINE_NOTIFY_URL: '', SEQLINE_LOGIN_POLICY: '  ' })).toEqual({});
    expect(
      parseHookDefaults({
        SEQLINE_HOOK_SECRET: ` ${SECRET} `,
        SEQLINE_NOTIFY_URL: 'https://push.example.com/notify',
        SEQLINE_NOTIFY_WINDOW_MS: '0',
        SEQLINE_BEFORE_SEND_URL: 'http://10.0.0.5:8080/before',
        SEQLINE_BEFORE_SEND_TIMEOUT_MS: '750',
        SEQLINE_BEFORE_SEND_FAILURE: 'open',
        SEQLINE_AFTER_SEND_URL: 'https://hooks.example.com/after',
        SEQLINE_SEND_POLICY: 'shared-group',
        SEQLINE_LOGIN_POLICY: 'one-per-platform',
      }),
    ).toEqual({
      secret: SECRET,
      notifyUrl: 'https://push.example.com/notify',
      notifyWindowMs: 0,
      beforeSendUrl: 'http://10.0.0.5:8080/before',
      beforeSendTimeoutMs: 750,
      beforeSendFailure: 'open',
      afterSendUrl: 'https://hooks.example.com/after',
      sendPolicy: 'shared-group',
      loginPolicy: 'one-per-platform',
    });
  });

  it('refuses each bad value naming its variable', () => {
    const bad: Array<[string, string]> = [
      ['SEQLINE_NOTIFY_URL', 'not a url'],
      ['SEQLINE_BEFORE_SEND_URL', 'ftp://files.example.com/'],
      ['SEQLINE_AFTER_SEND_URL', 'file:///etc/passwd'],
      ['SEQLINE_NOTIFY_WINDOW_MS', '60001'],
      ['SEQLINE_NOTIFY_WINDOW_MS', '-5'],
      ['SEQLINE_NOTIFY_WINDOW_MS', '1e3'],
      ['SEQLINE_BEFORE_SEND_TIMEOUT_MS', '5'],
      ['SEQLINE_BEFORE_SEND_TIMEOUT_MS', 'soon'],
      ['SEQLINE_BEFORE_SEND_FAILURE', 'retry'],
      ['SEQLINE_SEND_POLICY', 'friends'],
      ['SEQLINE_LOGIN_POLICY', 'ONE'],
    ];
    for (const [name, value] of bad)
      expect(failure({ [name]: value }), `${name}=${value}`).toMatch(new RegExp(`^invalid configuration:\\n  ${name}: `));
  });

  it('never repeats a secret, nor a URL that holds credentials', () => {
    const short = 'fifteen-secret!'; // one character too short
    const message = failure({ SEQLINE_HOOK_SECRET: short, SEQLINE_NOTIFY_URL: 'https://ops:hunter2hunter2@push.example.com/' });
    expect(message).toMatch(/SEQLINE_HOOK_SECRET: 16 to 512 characters/);
    expect(message).toMatch(/SEQLINE_NOTIFY_URL: credentials in a URL are refused/);
    expect(message).not.toContain(short);
    expect(message).not.toContain('hunter2');
    expect(failure({ SEQLINE_HOOK_SECRET: `${SECRET}${'x'.repeat(600)}` })).not.toContain(SECRET);
  });

  it('reads the secret from SEQLINE_HOOK_SECRET_FILE (whitespace around it dropped); a bad file is named, its content never', async () => {
    const file = join(dir, 'hook-secret');
    await writeFile(file, `${SECRET}\n`, { mode: 0o600 });
    expect(parseHookDefaults({ SEQLINE_HOOK_SECRET_FILE: file })).toEqual({ secret: SECRET });

    const missing = failure({ SEQLINE_HOOK_SECRET_FILE: join(dir, 'nope') });
    expect(missing).toMatch(/SEQLINE_HOOK_SECRET_FILE: cannot read .*nope \(ENOENT\)/);
    expect(failure({ SEQLINE_HOOK_SECRET_FILE: dir })).toMatch(/SEQLINE_HOOK_SECRET_FILE: cannot read .* \(EISDIR\)/);
    const empty = join(dir, 'empty');
    await writeFile(empty, '\n\n');
    expect(failure({ SEQLINE_HOOK_SECRET_FILE: empty })).toMatch(/SEQLINE_HOOK_SECRET_FILE: .*empty is empty/);
    const short = join(dir, 'short');
    await writeFile(short, 'tiny-secret\n');
    const tooShort = failure({ SEQLINE_HOOK_SECRET_FILE: short });
    expect(tooShort).toMatch(/SEQLINE_HOOK_SECRET_FILE: 16 to 512 characters/);
    expect(tooShort).not.toContain('tiny-secret');
    expect(failure({ SEQLINE_HOOK_SECRET_FILE: file, SEQLINE_HOOK_SECRET: SECRET })).toMatch(/not both/);
  });

  it('a distributed process lists every bad variable, hooks and others, in one ConfigError', () => {
    const load = () => loadDistributedConfig({ SEQLINE_SHARDS: '0', SEQLINE_LOGIN_POLICY: 'nobody', SEQLINE_NOTIFY_WINDOW_MS: 'x' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/SEQLINE_SECRET[\s\S]*SEQLINE_SHARDS[\s\S]*SEQLINE_NOTIFY_WINDOW_MS[\s\S]*SEQLINE_LOGIN_POLICY/);
    expect(loadDistributedConfig({ ...BASE, SEQLINE_LOGIN_POLICY: 'one' }).hookDefaults).toEqual({ loginPolicy: 'one' });
    expect(loadDistributedConfig(BASE).hookDefaults).toEqual({});
  });

  it('a hook URL without a secret is allowed, with one warning that hook calls go out unsigned', () => {
    const warnings: Array<[object, string | undefined]> = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (obj, msg) => void warnings.push([obj, msg]),
      error: () => {},
      child: () => logger,
    };
    warnUnsignedHooks(parseHookDefaults({ SEQLINE_AFTER_SEND_URL: 'https://hooks.example.com/after' }), logger);
    expect(warnings).toEqual([[{ hooks: ['afterSendUrl'] }, expect.stringMatching(/unsigned/)]]);
    warnUnsignedHooks(
      parseHookDefaults({ SEQLINE_AFTER_SEND_URL: 'https://hooks.example.com/after', SEQLINE_HOOK_SECRET: SECRET }),
      logger,
    );
    warnUnsignedHooks(parseHookDefaults({ SEQLINE_LOGIN_POLICY: 'one' }), logger);
    expect(warnings).toHaveLength(1);
  });

  it('a gateway process with a bad hook variable exits 1 naming it, without its value', async () => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', GATEWAY_MAIN], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, ...BASE, SEQLINE_HOOK_SECRET: 'leaky-but-short', SEQLINE_BEFORE_SEND_FAILURE: 'maybe' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(output).toMatch(/seqline failed to start: invalid configuration/);
    expect(output).toMatch(/SEQLINE_HOOK_SECRET: 16 to 512 characters/);
    expect(output).toMatch(/SEQLINE_BEFORE_SEND_FAILURE: one of closed, open/);
    expect(output).not.toContain('leaky-but-short');
  });
});
