/**
 * The Redis and NATS a round with service faults runs on: private instances on ports and in a
 * directory of their own, run by scripts/services.sh (`SERVICES_STATE_DIR`) from the binaries and
 * config the shared ones run (AOF everysec; JetStream sync_interval always). A restart, FLUSHALL
 * or rollback of them reaches this round's workers and gateways only. Cassandra stays the shared
 * one (the round's keyspace is its own).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@seqline/testing';
import { REPO_ROOT } from '../../../apps/worker/test/support/services.ts';

const run = promisify(execFile);

export type PrivateService = 'redis' | 'nats';

/**
 * Instances still running when the campaign exits (an error, a time limit) are killed through
 * their own pid files: they run detached (services.sh starts them in their own session).
 */
const running = new Set<PrivateServices>();
process.once('exit', () => {
  for (const services of running) services.killNow();
});

export class PrivateServices {
  private constructor(
    readonly dir: string,
    readonly redisPort: number,
    readonly natsPort: number,
    readonly natsHttpPort: number,
  ) {}

  /** Starts both and resolves once Redis answers PING and NATS /healthz (JetStream included). */
  static async start(dir: string): Promise<PrivateServices> {
    const services = new PrivateServices(dir, await freePort(), await freePort(), await freePort());
    running.add(services);
    try {
      await services.sh('start', 'redis', 'nats');
    } catch (err) {
      await services.close().catch(() => undefined);
      throw err;
    }
    return services;
  }

  get redisUrl(): string {
    return `redis://127.0.0.1:${this.redisPort}`;
  }

  get natsUrl(): string {
    return `nats://127.0.0.1:${this.natsPort}`;
  }

  /** What points a worker or gateway at them. */
  env(): Record<string, string> {
    return { REDIS_URL: this.redisUrl, NATS_URL: this.natsUrl };
  }

  /** Where each keeps its data (services.sh's layout under the state dir). */
  dataDir(svc: PrivateService): string {
    return svc === 'redis' ? join(this.dir, 'redis/data') : join(this.dir, 'nats/store');
  }

  /**
   * `scripts/services.sh <cmd> <svc…>` on this pair: start waits until they answer, stop is
   * graceful (Redis writes its AOF, JetStream shuts down), kill is SIGKILL.
   */
  async sh(cmd: 'start' | 'stop' | 'kill', ...svcs: PrivateService[]): Promise<string> {
    const { stdout, stderr } = await run('bash', ['scripts/services.sh', cmd, ...svcs], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        SERVICES_STATE_DIR: this.dir,
        REDIS_PORT: String(this.redisPort),
        NATS_PORT: String(this.natsPort),
        NATS_HTTP_PORT: String(this.natsHttpPort),
      },
      timeout: 180_000,
      maxBuffer: 4 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  }

  async redisCli(...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(this.redisPort), ...args], { timeout: 30_000 });
    return stdout;
  }

  async close(): Promise<void> {
    await this.sh('stop', 'redis', 'nats');
    running.delete(this);
  }

  /** SIGKILL to both, synchronously (for the exit hook). */
  killNow(): void {
    for (const pidFile of [join(this.dir, 'redis/redis.pid'), join(this.dir, 'nats/nats.pid')]) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
      } catch {
        // not running, or no pid file: nothing to stop
      }
    }
  }
}
