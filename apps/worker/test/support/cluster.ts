/**
 * Runs the distributed stack as real processes: N workers (`apps/worker/src/main.ts`) and M
 * gateways (`apps/gateway/src/main.ts`), one namespace per run, so runs sharing the services
 * never see each other's Redis keys, NATS subjects or streams. Faults: kill -9, SIGSTOP/SIGCONT.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../../server/test/child-server.ts';
import { SECRET } from '../../../server/test/harness.ts';
import { cleanupNamespace, REPO_ROOT } from './services.ts';

export const E2E_KEYSPACE = process.env.SEQLINE_E2E_KEYSPACE ?? 'seqline_e2e';
export const SHARDS = 64;
const MAINS = { worker: 'apps/worker/src/main.ts', gateway: 'apps/gateway/src/main.ts' } as const;
const READY = { worker: 'seqline worker running', gateway: 'seqline gateway listening' } as const;
const MAX_OUTPUT = 256 * 1024;

export type Role = keyof typeof MAINS;
export interface LogRecord {
  level: number;
  msg: string;
  time: number;
  shard?: number;
  epoch?: number;
  [k: string]: unknown;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Children still running when the test process exits (a timeout, a crash, ^C) are killed: a
 * stray worker of an old namespace would keep claiming shard epochs in the shared keyspace.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

export const uniqueId = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

/** One gateway or worker process. Log lines (pino JSON) are parsed; shard events are tracked. */
export class NodeProcess {
  private proc: ChildProcess | undefined;
  /** Recent raw output (bounded), for failure messages. */
  output = '';
  /** Every parsed log record at level ≥ info (pino: 30). */
  readonly records: LogRecord[] = [];
  /** Shards this process serves now (from its 'serving shard' / 'dropping shard' logs). */
  readonly serving = new Set<number>();
  private partial = '';

  constructor(
    readonly role: Role,
    readonly name: string,
    readonly env: Record<string, string>,
    readonly port?: number,
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }
  get alive(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }
  get url(): string {
    return `ws://127.0.0.1:${this.port}/v1/ws`;
  }
  get httpUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(timeoutMs = 60_000): Promise<void> {
    this.serving.clear();
    const proc = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', MAINS[this.role]], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    running.add(proc);
    proc.once('exit', () => running.delete(proc));
    proc.stdout?.on('data', (d: Buffer) => this.onOutput(d.toString()));
    proc.stderr?.on('data', (d: Buffer) => this.append(d.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start in ${timeoutMs} ms:\n${this.tail()}`)), timeoutMs);
      const check = setInterval(() => {
        if (this.records.some((r) => r.msg.startsWith(READY[this.role]))) {
          clearInterval(check);
          clearTimeout(timer);
          resolve();
        }
      }, 20);
      proc.once('exit', (code, signal) => {
        clearInterval(check);
        clearTimeout(timer);
        reject(new Error(`${this.name} exited early (${code ?? signal}):\n${this.tail()}`));
      });
    });
  }

  private onOutput(text: string): void {
    this.append(text);
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let rec: LogRecord;
      try {
        rec = JSON.parse(line) as LogRecord;
      } catch {
        continue;
      }
      if (rec.level < 30) continue;
      this.records.push(rec);
      if (typeof rec.shard !== 'number') continue;
      if (rec.msg === 'serving shard') this.serving.add(rec.shard);
      if (rec.msg === 'dropping shard' || rec.msg === 'shard lease lost') this.serving.delete(rec.shard);
    }
  }

  private append(text: string): void {
    this.output += text;
    if (this.output.length > MAX_OUTPUT) this.output = this.output.slice(-MAX_OUTPUT / 2);
  }

  tail(chars = 3000): string {
    return this.output.slice(-chars);
  }

  /** Records with this msg (optionally for one shard). */
  logged(msg: string, shard?: number): LogRecord[] {
    return this.records.filter((r) => r.msg === msg && (shard === undefined || r.shard === shard));
  }

  /** SIGKILL: no cleanup, no lease release, no ack — the crash the promises must survive. */
  async kill9(): Promise<void> {
    const proc = this.proc;
    if (!proc || !this.alive) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGCONT'); // a stopped process dies on SIGKILL too, but be explicit
    proc.kill('SIGKILL');
    await exited;
    this.serving.clear();
  }

  sigstop(): void {
    this.proc?.kill('SIGSTOP');
  }
  sigcont(): void {
    this.proc?.kill('SIGCONT');
  }

  /** SIGTERM and wait for the exit (SIGKILL after the grace); resolves to the exit code. */
  async terminate(graceMs = 15_000): Promise<number | null> {
    const proc = this.proc;
    if (!proc || !this.alive) return proc?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    proc.kill('SIGCONT');
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
      this.serving.clear();
    }
  }
}

export interface ClusterOptions {
  workers: number;
  gateways: number;
  leaseTtlMs?: number;
  /** Extra env for every process. */
  env?: Record<string, string>;
}

/** A namespace's worth of processes sharing the local services. */
export class Cluster {
  readonly workers: NodeProcess[] = [];
  readonly gateways: NodeProcess[] = [];
  readonly namespace = uniqueId('e2e');
  readonly tenant = uniqueId('t');
  readonly leaseTtlMs: number;
  private readonly baseEnv: Record<string, string>;

  private constructor(options: ClusterOptions) {
    this.leaseTtlMs = options.leaseTtlMs ?? 2000;
    this.baseEnv = {
      SEQLINE_NAMESPACE: this.namespace,
      SCYLLA_KEYSPACE: E2E_KEYSPACE,
      SCYLLA_MIGRATE: '1',
      SEQLINE_SECRET: SECRET,
      SEQLINE_LEASE_TTL_MS: String(this.leaseTtlMs),
      SEQLINE_SHARDS: String(SHARDS),
      HOST: '127.0.0.1',
      SEQLINE_RATE_PER_SEC: '100000',
      SEQLINE_RATE_BURST: '100000',
      LOG_LEVEL: 'info',
      ...options.env,
    };
  }

  /** Starts the workers, then the gateways, and waits until every shard is served, balanced and quiet. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(options);
    try {
      for (let i = 0; i < options.workers; i++) {
        const name = `w${i + 1}-${cluster.namespace}`;
        const port = await freePort(); // its /healthz and /metrics
        cluster.workers.push(
          new NodeProcess('worker', name, { ...cluster.baseEnv, SEQLINE_OWNER_ID: name, SEQLINE_WORKER_HTTP_PORT: String(port) }, port),
        );
      }
      for (let i = 0; i < options.gateways; i++) {
        const name = `g${i + 1}-${cluster.namespace}`;
        const port = await freePort();
        cluster.gateways.push(new NodeProcess('gateway', name, { ...cluster.baseEnv, SEQLINE_OWNER_ID: name, PORT: String(port) }, port));
      }
      // The first worker alone migrates (once per keyspace); the rest start side by side.
      const [first, ...rest] = cluster.workers;
      await first?.start(120_000);
      await Promise.all([...rest, ...cluster.gateways].map((p) => p.start()));
      await cluster.waitBalanced();
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  /** Every shard served by exactly one live worker, each worker serving some, no move for 2 ttl. */
  async waitBalanced(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastSnapshot = '';
    let quietSince = Date.now();
    for (;;) {
      const live = this.workers.filter((w) => w.alive);
      const snapshot = live.map((w) => [...w.serving].sort((a, b) => a - b).join(',')).join('|');
      if (snapshot !== lastSnapshot) {
        lastSnapshot = snapshot;
        quietSince = Date.now();
      }
      const total = live.reduce((n, w) => n + w.serving.size, 0);
      const union = new Set(live.flatMap((w) => [...w.serving]));
      const balanced = union.size === SHARDS && total === SHARDS && live.every((w) => w.serving.size > 0);
      if (balanced && Date.now() - quietSince >= 2 * this.leaseTtlMs) return;
      if (Date.now() > deadline) {
        throw new Error(`shards not balanced after ${timeoutMs} ms: ${live.map((w) => `${w.name}=${w.serving.size}`).join(' ')}`);
      }
      await sleep(100);
    }
  }

  /**
   * Waits until every shard has been (re)served since `since` — a new lease, a new epoch — and
   * is served now; returns, per shard, the newest epoch before `since` and the first after.
   */
  async waitAllServedSince(since: number, timeoutMs: number): Promise<{ shard: number; before: number; after: number }[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const records = this.workers.flatMap((w) => w.logged('serving shard'));
      const served = new Set(this.workers.filter((w) => w.alive).flatMap((w) => [...w.serving]));
      const fresh = new Set(records.filter((r) => r.time >= since).map((r) => r.shard));
      if (served.size === SHARDS && fresh.size === SHARDS) {
        return Array.from({ length: SHARDS }, (_, shard) => {
          const of = records.filter((r) => r.shard === shard);
          const before = Math.max(0, ...of.filter((r) => r.time < since).map((r) => r.epoch ?? 0));
          const after = Math.min(...of.filter((r) => r.time >= since).map((r) => r.epoch ?? 0));
          return { shard, before, after };
        });
      }
      if (Date.now() > deadline) throw new Error(`only ${fresh.size}/${SHARDS} shards re-served within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** Warnings and errors each process logged (the newest `perProcess`), for a failed test's report. */
  report(perProcess = 25): string {
    return [...this.workers, ...this.gateways]
      .map((p) => {
        const lines = p.records
          .filter((r) => r.level >= 40)
          .slice(-perProcess)
          .map((r) =>
            `  ${new Date(r.time).toISOString()} ${r.msg} ${JSON.stringify({ ...r, level: undefined, time: undefined, msg: undefined, pid: undefined, hostname: undefined })}`.slice(
              0,
              400,
            ),
          );
        return `${p.name} (${p.alive ? 'alive' : 'gone'}), ${p.records.filter((r) => r.level >= 40).length} warnings/errors:\n${lines.join('\n')}`;
      })
      .join('\n');
  }

  /** The live worker serving `shard` now, if any. */
  ownerOf(shard: number): NodeProcess | undefined {
    return this.workers.find((w) => w.alive && w.serving.has(shard));
  }

  async close(): Promise<void> {
    await Promise.all([...this.gateways, ...this.workers].map((p) => p.terminate().catch(() => undefined)));
    await cleanupNamespace(this.namespace);
  }
}
