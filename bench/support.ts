/** Process plumbing for the benches: temp dirs, ports, child servers, RSS and fd limits. */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { freePort } from '@seqline/testing';

export { freePort };
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Shared by the server children and the token issuer; only used on loopback. */
export const BENCH_SECRET = 'bench-secret-0123456789abcdef';

const SERVER_MAIN = fileURLToPath(new URL('../apps/server/src/main.ts', import.meta.url));
const RAW_SERVER_MAIN = fileURLToPath(new URL('./raw-ws-server.ts', import.meta.url));

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How much of a child's output is kept for error messages and diagnostics. */
const OUTPUT_TAIL_CHARS = 8000;

/**
 * Resolves once `proc` printed `readyText` on stdout, rejects if it exits first or after
 * `timeoutMs`; `tail()` is its last 8 kB of output (stdout and stderr), kept for its whole life.
 * The ready line is looked for before old text is dropped: one chunk can carry it and more than
 * 8 kB after it (a worker's 64 "serving shard" lines), and the bench once waited 60 s for a
 * line it had already received.
 */
export function watchChild(
  proc: ChildProcess,
  main: string,
  readyText: string,
  timeoutMs: number,
): { ready: Promise<void>; tail: () => string } {
  let output = '';
  // BENCH_CHILD_LOG_DIR: keep each child's whole output (e.g. with BENCH_NODE_ARGS=--trace-gc).
  const logFile = process.env.BENCH_CHILD_LOG_DIR
    ? join(process.env.BENCH_CHILD_LOG_DIR, `${basename(dirname(dirname(main)))}-${proc.pid}.log`)
    : undefined;
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-OUTPUT_TAIL_CHARS);
    if (logFile) appendFileSync(logFile, d);
  };
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${main} did not start: ${output.slice(-2000)}`)), timeoutMs);
    proc.stdout?.on('data', (d: Buffer) => {
      const seen = (output.slice(-readyText.length) + d.toString()).includes(readyText);
      keep(d);
      if (seen) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.stderr?.on('data', keep);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${main} exited early (${code}): ${output.slice(-2000)}`));
    });
  });
  return { ready, tail: () => output };
}

/** Temp dirs not removed yet: an interrupted run removes them on exit. */
const liveTempDirs = new Set<string>();

export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `seqline-bench-${prefix}-`));
  liveTempDirs.add(dir);
  return {
    dir,
    remove: async () => {
      await rm(dir, { recursive: true, force: true });
      liveTempDirs.delete(dir);
    },
  };
}

/** CPU seconds used by children that have exited (read from /proc just before they stop). */
let exitedChildCpu = 0;

/** CPU seconds this process and its bench servers have used so far. */
export function ownCpuSeconds(): number {
  const self = process.cpuUsage();
  return (self.user + self.system) / 1e6 + exitedChildCpu;
}

/** utime + stime of a live process, in seconds (USER_HZ is 100 on Linux). */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the ")" of the command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Every child we start, so a crashing bench never leaves a server behind. */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of liveTempDirs) rmSync(dir, { recursive: true, force: true });
});

export interface ChildServer {
  pid: number;
  port: number;
  url: string;
  /** SIGTERM, then SIGKILL if it has not exited after 10 s. */
  stop(): Promise<void>;
  /** Calls `listener` with every chunk the child writes from now on, stdout and stderr (lines may be split). */
  onOutput(listener: (chunk: string) => void): void;
}

/** `npm start` in a child process (the real entry point), listening on loopback. Default log level
 * (info): nothing is logged per request, and the ready line is an info line. `main`: another
 * checkout's apps/server/src/main.ts (the cpu bench measures two side by side). */
export function startSeqlineChild(
  dataDir: string,
  env: Record<string, string> = {},
  main = SERVER_MAIN,
  nodeArgs: readonly string[] = [],
): Promise<ChildServer> {
  return startChild(
    main,
    'seqline listening',
    {
      HOST: '127.0.0.1',
      SEQLINE_DATA_DIR: dataDir,
      SEQLINE_SECRET: BENCH_SECRET,
      LOG_LEVEL: 'info',
      ...env,
    },
    '/v1/ws',
    nodeArgs,
  );
}

/** The bare uWebSockets.js server of bench/raw-ws-server.ts: the transport floor. */
export function startRawChild(): Promise<ChildServer> {
  return startChild(RAW_SERVER_MAIN, 'raw listening', {}, '/raw');
}

async function startChild(
  main: string,
  readyText: string,
  env: Record<string, string>,
  path: string,
  nodeArgs: readonly string[] = [],
): Promise<ChildServer> {
  const port = await freePort();
  // e.g. SEQLINE_BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the servers.
  const extra = (process.env['SEQLINE_BENCH_SERVER_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
  const proc = spawn(process.execPath, [...nodeArgs, ...extra, '--conditions=source', '--import', 'tsx', main], {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  await watchChild(proc, main, readyText, 30_000).ready;
  const pid = proc.pid;
  if (pid === undefined) throw new Error(`${main}: no pid`);
  return {
    pid,
    port,
    url: `ws://127.0.0.1:${port}${path}`,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        children.delete(proc);
        return;
      }
      exitedChildCpu += await cpuSecondsOf(pid).catch(() => 0);
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      children.delete(proc);
    },
    onOutput(listener) {
      proc.stdout?.on('data', (d: Buffer) => listener(d.toString()));
      proc.stderr?.on('data', (d: Buffer) => listener(d.toString()));
    },
  };
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status). */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** Soft limit on open files of this process (children inherit it); Infinity when unlimited. */
export async function openFileLimit(): Promise<number> {
  const limits = await readFile('/proc/self/limits', 'utf8');
  const match = /^Max open files\s+(\S+)/m.exec(limits);
  const soft = match?.[1];
  if (soft === undefined || soft === 'unlimited') return Number.POSITIVE_INFINITY;
  return Number(soft);
}

/** Runs `task` over `items` with at most `concurrency` at once; results in input order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** The pid of a service scripts/services.sh started (`cassandra`, `redis`, `nats`), if it runs. */
export async function servicePid(service: 'cassandra' | 'redis' | 'nats'): Promise<number | undefined> {
  try {
    const file = fileURLToPath(new URL(`../.services/${service}/${service}.pid`, import.meta.url));
    const pid = Number((await readFile(file, 'utf8')).trim());
    await cpuSecondsOf(pid);
    return pid;
  } catch {
    return undefined;
  }
}

/** The kernel timer slack of a process's main thread, for the record ("unknown" if unreadable). */
/** A process's scheduling policy (field 41 of /proc/<pid>/stat), e.g. SCHED_BATCH. */
export async function schedPolicyOf(pid: number | undefined): Promise<string> {
  if (pid === undefined) return 'unknown';
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
    const names = ['SCHED_OTHER', 'SCHED_FIFO', 'SCHED_RR', 'SCHED_BATCH', 'SCHED_ISO', 'SCHED_IDLE', 'SCHED_DEADLINE'];
    return names[Number(fields[38])] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export async function timerSlackOf(pid: number | undefined): Promise<string> {
  if (pid === undefined) return 'unknown';
  try {
    const ns = Number((await readFile(`/proc/${pid}/timerslack_ns`, 'utf8')).trim());
    return `${ns / 1000} µs`;
  } catch {
    return 'unknown';
  }
}

/** Jiffies of all CPUs from /proc/stat: busy (everything but idle and iowait) and total. */
export async function cpuTimes(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? '';
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}
