/**
 * The processes of the handover bench: workers and a gateway as children (the real entry
 * points) in a namespace and a keyspace of their own, with the default lease ttl. Each child's
 * pino lines are counted as they come (which shard leases were taken without a wait-out), and
 * its HTTP endpoints polled (`/healthz`, `/readyz`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BENCH_SECRET, freePort, sleep } from './support.ts';

const WORKER_MAIN = fileURLToPath(new URL('../apps/worker/src/main.ts', import.meta.url));
const GATEWAY_MAIN = fileURLToPath(new URL('../apps/gateway/src/main.ts', import.meta.url));
const READY = { worker: 'seqline worker running', gateway: 'seqline gateway listening' } as const;

export type Role = keyof typeof READY;

/** One child: its ports, its lease log so far, its exit. */
export class BenchNode {
  /** `shard lease acquired` lines by their `handover` field (never-owned, released, not-released). */
  readonly leases = new Map<string, number>();
  /** The longest `waitMs` a lease of this process was given. */
  longestLeaseWaitMs = 0;
  private proc: ChildProcess | undefined;
  private output = '';
  private partial = '';
  private readyAt: number | undefined;

  constructor(
    readonly role: Role,
    readonly name: string,
    readonly port: number,
    readonly env: Record<string, string>,
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Spawns the process; resolves when it logs its ready line (performance.now() then). */
  start(): Promise<number> {
    this.readyAt = undefined;
    const main = this.role === 'worker' ? WORKER_MAIN : GATEWAY_MAIN;
    const flags = this.role === 'worker' ? ['--max-semi-space-size=64'] : [];
    const proc = spawn(process.execPath, [...flags, '--conditions=source', '--import', 'tsx', main], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    process.once('exit', () => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    });
    proc.stdout?.on('data', (d: Buffer) => this.onOutput(d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-8000)));
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start: ${this.output.slice(-2000)}`)), 120_000);
      const check = setInterval(() => {
        if (this.readyAt === undefined) return;
        clearInterval(check);
        clearTimeout(timer);
        resolve(this.readyAt);
      }, 5);
      proc.once('exit', (code) => {
        clearInterval(check);
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code}): ${this.output.slice(-2000)}`));
      });
    });
  }

  /** SIGTERM (a planned stop: the worker hands its shards over) and wait for the exit. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    proc.kill('SIGTERM');
    const killer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  }

  /** GET path → status (0 when nothing answers). */
  async status(path: string): Promise<number> {
    try {
      const res = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  }

  /** Polls `path` every 10 ms until it answers 200; resolves with performance.now() then. */
  async until200(path: string, timeoutMs = 120_000): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if ((await this.status(path)) === 200) return performance.now();
      await sleep(10);
    }
    throw new Error(`${this.name} ${path} not 200 after ${timeoutMs} ms: ${this.output.slice(-1500)}`);
  }

  tail(): string {
    return this.output.slice(-2000);
  }

  private onOutput(text: string): void {
    this.output = (this.output + text).slice(-8000);
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let rec: { msg?: string; handover?: string; waitMs?: number };
      try {
        rec = JSON.parse(line) as typeof rec;
      } catch {
        continue;
      }
      if (rec.msg?.startsWith(READY[this.role])) this.readyAt ??= performance.now();
      if (rec.msg === 'shard lease acquired' && rec.handover !== undefined) {
        this.leases.set(rec.handover, (this.leases.get(rec.handover) ?? 0) + 1);
        this.longestLeaseWaitMs = Math.max(this.longestLeaseWaitMs, rec.waitMs ?? 0);
      }
    }
  }
}

export interface HandoverStack {
  namespace: string;
  workers: BenchNode[];
  gateway: BenchNode;
  /** A worker process to replace `w` (same name and ports, a new owner id: a restarted pod). */
  replacement(w: BenchNode, generation: number): BenchNode;
}

/** The nodes of a deployment (not started). Default lease ttl: the point of the bench. */
export async function handoverStack(namespace: string, keyspace: string, workers: number): Promise<HandoverStack> {
  const base = {
    SEQLINE_SECRET: BENCH_SECRET,
    SEQLINE_NAMESPACE: namespace,
    SCYLLA_KEYSPACE: keyspace,
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
  };
  const workerEnv = async (name: string) => {
    const port = await freePort();
    return { port, env: { ...base, PORT: String(await freePort()), SEQLINE_OWNER_ID: name, SEQLINE_WORKER_HTTP_PORT: String(port) } };
  };
  const nodes: BenchNode[] = [];
  for (let i = 1; i <= workers; i++) {
    const { port, env } = await workerEnv(`${namespace}-w${i}`);
    nodes.push(new BenchNode('worker', `w${i}`, port, env));
  }
  const gwPort = await freePort();
  const gateway = new BenchNode('gateway', 'g1', gwPort, { ...base, PORT: String(gwPort), SEQLINE_OWNER_ID: `${namespace}-g1` });
  return {
    namespace,
    workers: nodes,
    gateway,
    replacement: (w, generation) =>
      new BenchNode('worker', w.name, w.port, { ...w.env, SEQLINE_OWNER_ID: `${namespace}-${w.name}-${generation}` }),
  };
}
