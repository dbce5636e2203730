/**
 * The services a round runs on when it may break them: Redis and NATS with `--service-faults`,
 * Cassandra with `--own-cassandra` — private instances on ports and in a directory of their own,
 * run by scripts/services.sh (`SERVICES_STATE_DIR`) from the binaries and config the shared ones
 * run (AOF everysec; JetStream sync_interval always; the Cassandra node's yaml). A restart,
 * FLUSHALL or rollback of them reaches this round's workers and gateways only; services.sh
 * refuses the shared ones' ports for a private instance, so none of it can reach those.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@seqline/testing';
import { REPO_ROOT } from '../../../apps/worker/test/support/services.ts';

const run = promisify(execFile);

export type PrivateService = 'redis' | 'nats' | 'cassandra';

/**
 * Instances still running when the campaign exits (an error, a time limit, a signal) are killed
 * through their own pid files: they run detached (services.sh starts them in their own session).
 */
const running = new Set<PrivateServices>();
process.once('exit', () => {
  for (const services of running) services.killNow();
});
// A signal ends the campaign through process.exit, so the hook above (and the processes' own) runs.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

export class PrivateServices {
  private constructor(
    readonly dir: string,
    readonly services: readonly PrivateService[],
    private readonly ports: Record<string, number>,
  ) {}

  /**
   * Starts them and resolves once each answers: Redis PING, NATS /healthz (JetStream included),
   * Cassandra a CQL query.
   */
  static async start(dir: string, svcs: readonly PrivateService[]): Promise<PrivateServices> {
    const ports: Record<string, number> = {};
    for (const name of ['REDIS_PORT', 'NATS_PORT', 'NATS_HTTP_PORT', 'CASSANDRA_PORT', 'CASSANDRA_STORAGE_PORT', 'CASSANDRA_JMX_PORT'])
      ports[name] = await freePort();
    const services = new PrivateServices(dir, svcs, ports);
    running.add(services);
    try {
      await services.sh('start', ...svcs);
    } catch (err) {
      await services.close().catch(() => undefined);
      throw err;
    }
    return services;
  }

  has(svc: PrivateService): boolean {
    return this.services.includes(svc);
  }

  get redisUrl(): string {
    return `redis://127.0.0.1:${String(this.ports.REDIS_PORT)}`;
  }

  get natsUrl(): string {
    return `nats://127.0.0.1:${String(this.ports.NATS_PORT)}`;
  }

  get cassandraContactPoint(): string {
    return `127.0.0.1:${String(this.ports.CASSANDRA_PORT)}`;
  }

  /** Where they are, for the round's log line. */
  describe(): string {
    const where = { redis: this.redisUrl, nats: this.natsUrl, cassandra: `cql ${this.cassandraContactPoint}` };
    return this.services.map((s) => `${s} ${where[s]}`).join(', ');
  }

  /** What points a worker or gateway at them (the services not named stay the shared ones). */
  env(): Record<string, string> {
    return {
      ...(this.has('redis') ? { REDIS_URL: this.redisUrl } : {}),
      ...(this.has('nats') ? { NATS_URL: this.natsUrl } : {}),
      ...(this.has('cassandra') ? { SCYLLA_CONTACT_POINTS: this.cassandraContactPoint } : {}),
    };
  }

  /** Where each keeps its data (services.sh's layout under the state dir). */
  dataDir(svc: PrivateService): string {
    return join(this.dir, { redis: 'redis/data', nats: 'nats/store', cassandra: 'cassandra/data' }[svc]);
  }

  /**
   * `scripts/services.sh <cmd> <svc…>` on these: start waits until they answer, stop is graceful
   * (Redis writes its AOF, JetStream shuts down, Cassandra drains), kill is SIGKILL.
   */
  async sh(cmd: 'start' | 'stop' | 'kill', ...svcs: PrivateService[]): Promise<string> {
    const { stdout, stderr } = await run('bash', ['scripts/services.sh', cmd, ...svcs], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        SERVICES_STATE_DIR: this.dir,
        ...Object.fromEntries(Object.entries(this.ports).map(([k, v]) => [k, String(v)])),
        // A node that acknowledges only what its commitlog has synced: with the default periodic
        // sync a kill -9 of the JVM loses the writes of the last seconds it acknowledged, which a
        // replicated cluster's quorum would have kept (docs/faults.md, "Cassandra restarts").
        CASSANDRA_COMMITLOG_SYNC: 'batch',
      },
      timeout: 180_000,
      maxBuffer: 4 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  }

  async redisCli(...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(this.ports.REDIS_PORT), ...args], { timeout: 30_000 });
    return stdout;
  }

  async close(): Promise<void> {
    await this.sh('stop', ...this.services);
    running.delete(this);
  }

  /** SIGKILL to each, synchronously (for the exit hook). */
  killNow(): void {
    for (const pidFile of this.services.map((s) => join(this.dir, s, `${s}.pid`))) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
      } catch {
        // not running, or no pid file: nothing to stop
      }
    }
  }
}
