/** Runs apps/server as a child process (the real `npm start` entry), for crash tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SECRET } from './harness.ts';

export { freePort } from '@seqline/testing';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

export class ChildServer {
  private proc: ChildProcess | undefined;
  output = '';
  constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly env: Record<string, string> = {},
  ) {}

  get url(): string {
    return `ws://127.0.0.1:${this.port}/v1/ws`;
  }

  async start(): Promise<void> {
    const proc = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', MAIN], {
      env: {
        ...process.env,
        PORT: String(this.port),
        HOST: '127.0.0.1',
        SEQLINE_DATA_DIR: this.dataDir,
        SEQLINE_SECRET: SECRET,
        LOG_LEVEL: 'info',
        SEQLINE_RATE_PER_SEC: '100000',
        SEQLINE_RATE_BURST: '100000',
        // One thread unless a test asks for more (SEQLINE_THREADS in `env`): the default is the cores.
        SEQLINE_THREADS: '1',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        this.output += d.toString();
        if (this.output.includes('seqline listening')) resolve();
      };
      proc.stdout?.on('data', onData);
      proc.stderr?.on('data', (d: Buffer) => {
        this.output += d.toString();
      });
      proc.once('exit', (code) => reject(new Error(`server exited early (${code}): ${this.output.slice(-2000)}`)));
      setTimeout(() => reject(new Error(`server did not start: ${this.output.slice(-2000)}`)), 20_000);
    });
  }

  /** Resolves once the process has exited, however (a preload may SIGKILL it from inside). */
  async exited(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise((r) => proc.once('exit', r));
  }

  /** SIGKILL: no cleanup, no flush — the crash the promises must survive. */
  async kill9(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
    this.output = '';
  }

  /** SIGTERM and wait for a clean exit; resolves to the exit code. */
  async terminate(): Promise<number | null> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return proc?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    proc.kill('SIGTERM');
    return exited;
  }
}
