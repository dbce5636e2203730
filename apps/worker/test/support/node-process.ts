/**
 * One gateway or worker of the distributed stack as a real child process (its `main.ts` under
 * tsx): started until it logs ready, its pino output parsed, killed with -9, stopped and resumed
 * (SIGSTOP/SIGCONT) or terminated. Cluster (cluster.ts) runs several of them in one namespace.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from './services.ts';

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

/**
 * Children still running when the test process exits (a timeout, a crash, ^C) are killed: a
 * stray worker of an old namespace would keep claiming shard epochs in the shared keyspace.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

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
