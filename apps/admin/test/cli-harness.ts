/** Runs the real seqline-admin entry as a child process against an in-process embedded server. */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '@seqline/core';
import { loadOrCreateSecret } from '@seqline/protocol';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '@seqline/server';
import { buildWorkspace } from '@seqline/testing/build';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/seqline-admin.mjs', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Env of the child without any Seqline settings of the developer's shell. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(SEQLINE_|SCYLLA_)/.test(key)) env[key] = value;
  }
  return { ...env, ...extra };
}

/** `node --conditions=source --import tsx apps/admin/src/main.ts …` */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return run(['--conditions=source', '--import', 'tsx', MAIN, ...args], env);
}

/** The installed `seqline-admin` bin: the built JS, so the workspace is built first. */
export async function runBin(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  await buildWorkspace();
  return run([BIN, ...args], env);
}

function run(nodeArgs: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface CliServer {
  server: RunningServer;
  dataDir: string;
  url: string;
  secret: string;
  /** Runs the CLI pointed at this server, minting its admin token from the data dir. */
  cli(...args: string[]): Promise<CliResult>;
  stop(): Promise<void>;
}

/** No SEQLINE_SECRET: the server creates `<dataDir>/secret`, which the CLI then reads. */
export async function startCliServer(): Promise<CliServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'seqline-admin-e2e-'));
  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: dataDir,
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
  });
  const server = await startEmbeddedServer(config, silentLogger);
  const url = `http://127.0.0.1:${server.port}`;
  return {
    server,
    dataDir,
    url,
    secret: await loadOrCreateSecret(dataDir),
    cli: (...args) => runCli(['--url', url, '--data-dir', dataDir, ...args]),
    async stop() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function waitFor(probe: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
