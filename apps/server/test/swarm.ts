/** Parent side of socket-swarm.ts: a child process holding many member sockets. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SECRET } from './harness.ts';

const CHILD = fileURLToPath(new URL('./socket-swarm.ts', import.meta.url));

type Reply = { type: string; [k: string]: unknown };

export class SocketSwarm {
  private readonly queue: Reply[] = [];
  private waiter: ((r: Reply) => void) | undefined;

  private constructor(private readonly proc: ChildProcess) {
    proc.on('message', (m: Reply) => {
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = undefined;
        w(m);
      } else this.queue.push(m);
    });
  }

  static async start(): Promise<SocketSwarm> {
    const proc = fork(CHILD, [], { execArgv: ['--conditions=source', '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const swarm = new SocketSwarm(proc);
    await swarm.next('ready');
    return swarm;
  }

  private next(type: string, timeoutMs = 120_000): Promise<Reply> {
    const queued = this.queue.shift();
    const got = queued
      ? Promise.resolve(queued)
      : new Promise<Reply>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`swarm: no ${type} reply`)), timeoutMs);
          this.waiter = (r) => {
            clearTimeout(timer);
            resolve(r);
          };
        });
    return got.then((r) => {
      if (r.type === 'error') throw new Error(`swarm failed: ${String(r.message)}`);
      if (r.type !== type) throw new Error(`swarm: expected ${type}, got ${r.type}`);
      return r;
    });
  }

  private async ask<T>(msg: object, type: string): Promise<T> {
    this.proc.send(msg);
    return (await this.next(type)) as unknown as T;
  }

  connect(url: string, users: string[], tenant = 'default') {
    return this.ask<{ count: number; failed: number; ms: number }>({ cmd: 'connect', url, users, secret: SECRET, tenant }, 'connected');
  }

  pushes(appinfo: string) {
    return this.ask<{ count: number; last: number; bad: number; closed: string[] }>({ cmd: 'pushes', appinfo }, 'pushes');
  }

  readAll(group: string, appinfo: string) {
    return this.ask<{ listed: number; found: number; errors: string[]; ms: number }>({ cmd: 'readAll', group, appinfo }, 'readAll');
  }

  /** One request on member socket `member` (index in the connect list), timed in the child. */
  call(member: number, op: string, args: object) {
    return this.ask<{ result: Record<string, unknown>; ms: number; at: number }>({ cmd: 'call', member, op, args }, 'call');
  }

  async close(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.send({ cmd: 'close' });
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}
