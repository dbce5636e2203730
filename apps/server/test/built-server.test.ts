/**
 * The built server (`npm start`: `node apps/server/dist/main.js`, no tsx, no `source` condition)
 * starts, serves a send and a sync, stops cleanly — and the embedded mode never loads the
 * distributed-mode clients: cassandra-driver, ioredis, @nats-io.
 *
 * How the loaded modules are seen: the child runs with `--import support/loaded-modules-probe.mjs`,
 * which records every ESM resolution (a module.register resolve hook, written synchronously
 * before the module is handed over) and, at exit, every CommonJS module in the require cache
 * (the packages CJS code requires, which Node 20 does not pass through ESM hooks). A control
 * run imports `@seqline/store/scylla` under the same probe and must show cassandra-driver.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueToken } from '@seqline/protocol';
import { buildWorkspace, REPO_ROOT } from '@seqline/testing/build';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, SECRET } from './harness.ts';

const MAIN = join(REPO_ROOT, 'apps/server/dist/main.js');
const PROBE = fileURLToPath(new URL('./support/loaded-modules-probe.mjs', import.meta.url));
const DISTRIBUTED_ONLY = ['node_modules/cassandra-driver/', 'node_modules/ioredis/', 'node_modules/@nats-io/'];

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'seqline-built-'));
  await buildWorkspace();
}, 240_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** The child's env: no NODE_OPTIONS (a `--conditions=source` there would run the sources). */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  return { ...env, ...extra };
}

async function loaded(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter(Boolean);
}

describe('the built embedded server', () => {
  it('runs from dist/, answers send and sync, and never loads cassandra-driver, ioredis or @nats-io', async () => {
    const out = join(work, 'server-modules.txt');
    const proc = spawn(process.execPath, ['--import', PROBE, MAIN], {
      env: childEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SEQLINE_DATA_DIR: join(work, 'data'),
        SEQLINE_SECRET: SECRET,
        LOG_LEVEL: 'info',
        SEQLINE_LOADED_MODULES_OUT: out,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${output.slice(-2000)}`)), 20_000);
      const onData = (d: Buffer) => {
        output += d.toString();
        const m = /seqline listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`server exited early (${code}): ${output.slice(-2000)}`));
      });
    });

    // The write and read paths run too, so modules loaded on first use are in the list.
    const base = `http://127.0.0.1:${port}`;
    const alice = { authorization: `Bearer ${await issueToken({ secret: SECRET, user: 'alice', tenant: 't', ttlSeconds: 600 })}` };
    const bob = { authorization: `Bearer ${await issueToken({ secret: SECRET, user: 'bob', tenant: 't', ttlSeconds: 600 })}` };
    const sent = await fetch(`${base}/v1/send`, {
      method: 'POST',
      headers: { ...alice, 'content-type': 'application/json' },
      body: JSON.stringify({ appinfo: appinfo(), to: { user: 'bob' }, type: 'text', body: { text: 'built' } }),
    });
    expect(sent.status).toBe(200);
    const synced = await fetch(`${base}/v1/sync?maxSeq=0&limit=10`, { headers: bob });
    expect(synced.status).toBe(200);
    expect(JSON.stringify(await synced.json())).toContain('"built"');

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);

    const modules = await loaded(out);
    // The built JS ran: our packages from dist/, no TypeScript source, no tsx.
    expect(modules.some((m) => m.includes('/libs/store/dist/index.js'))).toBe(true);
    expect(modules.some((m) => m.includes('/apps/gateway/dist/'))).toBe(true);
    expect(modules.filter((m) => /\/(libs|apps)\/[^/]+\/src\//.test(m) || m.endsWith('.ts'))).toEqual([]);
    expect(modules.filter((m) => m.includes('node_modules/tsx/'))).toEqual([]);
    // Both halves of the probe saw something: LMDB through ESM, pino's CJS files via the cache.
    expect(modules.some((m) => m.includes('node_modules/lmdb/'))).toBe(true);
    expect(modules.some((m) => m.startsWith('/') && m.includes('node_modules/pino/'))).toBe(true);
    expect(modules.filter((m) => DISTRIBUTED_ONLY.some((d) => m.includes(d)))).toEqual([]);
  });

  it('control: the probe does see cassandra-driver when @seqline/store/scylla is imported', async () => {
    const out = join(work, 'scylla-modules.txt');
    const r = spawnSync(process.execPath, ['--import', PROBE, '--input-type=module', '-e', "import '@seqline/store/scylla';"], {
      cwd: REPO_ROOT,
      env: childEnv({ SEQLINE_LOADED_MODULES_OUT: out }),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const modules = await loaded(out);
    expect(modules.some((m) => m.includes('/libs/store/dist/scylla/index.js'))).toBe(true);
    expect(modules.some((m) => m.includes('node_modules/cassandra-driver/'))).toBe(true);
  });
});
