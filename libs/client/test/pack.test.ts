/**
 * @seqline/client as an app gets it: built, packed, installed from the tarball into an empty
 * project (no workspace, no tsx, no network: its one dependency comes as a local tarball),
 * imported by plain `node` against a real embedded server, type-checked by a consumer without
 * @types/node, and bundled for the browser with nothing of Node or `ws` in it.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { silentLogger } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '@seqline/server';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const CLIENT_DIR = fileURLToPath(new URL('..', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const SECRET = 'pack-test-secret-0123456789abcdef';

/** The child npm must not inherit the workspace's npm_* settings (prefix, workspace, lifecycle). */
const childEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await exec('npm', args, { cwd, env: childEnv, timeout: 45_000, maxBuffer: 16 << 20 });
  return stdout;
}

/** An empty ESM project with the given tarballs installed, offline. */
async function project(dir: string, tarballs: string[]): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'pack-app', version: '1.0.0', private: true, type: 'module' }));
  await npm(['install', ...tarballs, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
  await copyFile(join(CLIENT_DIR, 'test/support/pack-app.mjs'), join(dir, 'app.mjs'));
  return dir;
}

let tmp: string;
let packedFiles: string[];
let bare: string; // client + uuid
let withWs: string; // client + uuid + the optional peer ws
let browserBundle: { errors: unknown[]; metafile: Metafile };
let server: RunningServer;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'seqline-pack-'));
  // `npm pack` runs the package's prepack: the real build (tsc -p tsconfig.build.json).
  const packed = JSON.parse(await npm(['pack', '--pack-destination', tmp, '--json'], CLIENT_DIR)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const client = join(tmp, packed[0]!.filename);
  packedFiles = packed[0]!.files.map((f) => f.path).sort();
  const deps = join(tmp, 'deps');
  await mkdir(deps);
  const depTarballs = JSON.parse(
    await npm(
      ['pack', join(ROOT, 'node_modules/uuid'), join(ROOT, 'node_modules/ws'), '--pack-destination', deps, '--json', '--ignore-scripts'],
      deps,
    ),
  ) as Array<{ filename: string }>;
  const [uuid, ws] = depTarballs.map((t) => join(deps, t.filename));
  [bare, withWs] = await Promise.all([project(join(tmp, 'bare'), [client, uuid!]), project(join(tmp, 'with-ws'), [client, uuid!, ws!])]);

  // What a browser app's bundler does with the installed package; esbuild fails on a Node builtin.
  browserBundle = await build({
    entryPoints: [join(bare, 'node_modules/@seqline/client/dist/index.js')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    outfile: join(tmp, 'browser.mjs'),
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: bare,
  }).catch((err: Error) => ({ errors: [err.message], metafile: { inputs: {}, outputs: {} } }));

  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: join(tmp, 'data'),
    SEQLINE_SECRET: SECRET,
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
  });
  server = await startEmbeddedServer(config, silentLogger);
}, 90_000);

afterAll(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

interface AppReport {
  ok: boolean;
  message?: string;
  code?: string;
  typed?: boolean;
  first: { seq: number; duplicate: boolean; appinfo: string };
  again: { seq: number; duplicate: boolean; appinfo: string };
  bobSyncs: number;
  pushedToBob: Array<{ seq: number; appinfo: string; from: string; body: unknown }>;
  missed: Array<{ seq: number; appinfo: string }>;
  resumed: Array<{ seq: number; appinfo: string }>;
  bobMaxSeq: number;
  storedMaxSeq: number;
  opened: Array<{ query: boolean; header: boolean }>;
  hadGlobalWebSocket: boolean;
}

async function runApp(dir: string, mode: string, nodeFlags: string[] = [], env: Record<string, string> = {}): Promise<AppReport> {
  const [alice, bob] = [`alice-${mode}`, `bob-${mode}`];
  const { stdout } = await exec(process.execPath, [...nodeFlags, 'app.mjs'], {
    cwd: dir,
    timeout: 25_000,
    env: {
      ...childEnv,
      ...env,
      MODE: mode,
      URL: `ws://127.0.0.1:${server.port}`,
      BOB: bob,
      STORE_DIR: dir,
      TOKEN_ALICE: await issueToken({ secret: SECRET, user: alice, ttlSeconds: 600 }),
      TOKEN_BOB: await issueToken({ secret: SECRET, user: bob, ttlSeconds: 600 }),
    },
  }).catch((err: { stdout?: string; stderr?: string }) => {
    throw new Error(`app (${mode}) failed: ${err.stdout ?? ''}${err.stderr ?? ''}`);
  });
  const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as AppReport;
  if (!report.ok) throw new Error(`app (${mode}): ${report.message}`);
  return report;
}

/** What every app run must show: push, duplicate resend, and a sync by max seq that misses nothing and repeats nothing. */
function expectChat(r: AppReport, mode: string): void {
  expect(r.first.duplicate).toBe(false);
  expect(r.again).toEqual({ ...r.first, duplicate: true });
  // Delivered by the push alone: bob synced once (at connect), and saw the message once.
  expect(r.bobSyncs).toBe(1);
  expect(r.pushedToBob).toEqual([{ seq: expect.any(Number), appinfo: r.first.appinfo, from: `alice-${mode}`, body: { text: 'hi 1' } }]);
  expect(r.resumed.map((e) => e.appinfo)).toEqual(r.missed.map((m) => m.appinfo));
  expect(r.resumed[0]!.seq).toBeGreaterThan(r.pushedToBob[0]!.seq);
  expect(r.resumed[1]!.seq).toBeGreaterThan(r.resumed[0]!.seq);
  expect(r.bobMaxSeq).toBe(r.resumed[1]!.seq);
  expect(r.storedMaxSeq).toBe(r.bobMaxSeq);
}

/** Relative and bare specifiers of every static or literal dynamic import in an ES module. */
function importSpecifiers(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(
    /(?:^|[;\n])\s*(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm,
  )) {
    out.push((m[1] ?? m[2] ?? m[3])!);
  }
  return out;
}

describe('@seqline/client, packed and installed', () => {
  it('ships the built entries, their types and the README, and no sources', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/node.js', 'dist/node.d.ts']),
    );
    expect(packedFiles.filter((f) => !/^dist\/[\w-]+\.(js|d\.ts)$/.test(f) && f !== 'README.md' && f !== 'package.json')).toEqual([]);
  });

  it('the browser entry reaches no Node builtin, no fs and no ws', async () => {
    const pkgDir = join(bare, 'node_modules/@seqline/client');
    const seen = new Set<string>();
    const bareSpecifiers = new Set<string>();
    const visit = async (file: string): Promise<void> => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of importSpecifiers(await readFile(file, 'utf8'))) {
        if (spec.startsWith('.')) await visit(resolve(dirname(file), spec));
        else bareSpecifiers.add(spec);
      }
    };
    await visit(join(pkgDir, 'dist/index.js'));
    expect(seen.size).toBeGreaterThan(10); // the scan followed the graph
    expect([...seen].map((f) => f.slice(pkgDir.length))).not.toContain('/dist/file-max-seq-store.js');
    expect([...bareSpecifiers]).toEqual(['uuid']);
    const nodeOnly = new Set([...builtinModules, 'ws']);
    expect([...bareSpecifiers].filter((s) => s.startsWith('node:') || nodeOnly.has(s))).toEqual([]);

    // A browser bundler agrees (esbuild, run in beforeAll, would have thrown on a Node builtin).
    expect(browserBundle.errors).toEqual([]);
    const inputs = Object.keys(browserBundle.metafile.inputs);
    expect(inputs.filter((p) => /(^|\/)node_modules\/ws\/|^node:|(^|\/)file-max-seq-store/.test(p))).toEqual([]);
    expect(inputs.some((p) => p.includes('node_modules/uuid/dist/esm-browser/'))).toBe(true);
  });

  it('its types serve a TypeScript app with no @types/node (browser libs) on both entries', async () => {
    const dir = join(tmp, 'ts-consumer');
    await mkdir(dir);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'ts-consumer', private: true, type: 'module' }));
    await symlink(join(bare, 'node_modules'), join(dir, 'node_modules'));
    await writeFile(
      join(dir, 'app.ts'),
      [
        "import { SeqlineClient, SeqlineClientError, type Entry, type MaxSeqStore } from '@seqline/client';",
        "import { FileMaxSeqStore } from '@seqline/client/node';",
        "const store: MaxSeqStore = { load: async () => Number(localStorage.getItem('m') ?? 0), save: async (s) => localStorage.setItem('m', String(s)) };",
        "const c = new SeqlineClient({ url: 'wss://example.test', token: 't', store, WebSocket, tokenTransport: 'query' });",
        "c.on('entries', (es: Entry[]) => { for (const e of es) console.log(e.seq, e.appinfo); });",
        "const f: MaxSeqStore = new FileMaxSeqStore('x.json');",
        "export const out: Array<unknown> = [c.send({ to: { user: 'bob' }, type: 'text', body: { text: 'hi' } }), f, SeqlineClientError];",
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2023', 'DOM'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ['app.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const run = await exec(process.execPath, [tsc, '-p', dir], { timeout: 45_000 }).then(
      () => 'ok',
      (err: { stdout?: string }) => err.stdout ?? 'tsc failed',
    );
    expect(run).toBe('ok');
  });

  it.skipIf(NODE_MAJOR >= 22)('on Node 20 with neither a global WebSocket nor ws, connect fails with CONFIG', async () => {
    const r = await runApp(bare, 'none');
    expect({ code: r.code, typed: r.typed }).toEqual({ code: 'CONFIG', typed: true });
  });

  it('Node + ws passed in: token in a header; push, duplicate resend, sync by max seq from the file store', async () => {
    const r = await runApp(withWs, 'ws');
    expectChat(r, 'ws');
    expect(r.opened.length).toBeGreaterThanOrEqual(3);
    expect(new Set(r.opened.map((o) => JSON.stringify(o)))).toEqual(new Set([JSON.stringify({ query: false, header: true })]));
  });

  it('Node with no option: the global WebSocket on Node >= 22, else the optional peer ws', async () => {
    const r = await runApp(withWs, 'peer');
    expectChat(r, 'peer');
    expect(r.hadGlobalWebSocket).toBe(NODE_MAJOR >= 22);
  });

  it('the browser bundle on a global WebSocket: token in the query string, max seq in localStorage', async () => {
    const flags = NODE_MAJOR >= 22 ? [] : ['--experimental-websocket'];
    const r = await runApp(bare, 'global', flags, { SDK: join(tmp, 'browser.mjs') });
    expectChat(r, 'global');
    expect(r.opened.length).toBeGreaterThanOrEqual(3);
    expect(new Set(r.opened.map((o) => JSON.stringify(o)))).toEqual(new Set([JSON.stringify({ query: true, header: false })]));
  });
});
