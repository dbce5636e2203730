/**
 * Faults of the round's private services (private-services.ts). Behind `--service-faults`, Redis:
 * FLUSHALL; restart (kill -9 or a graceful stop); rollback (restart from a copy of its data taken
 * at the round's start). NATS: restart (kill -9 or graceful); JetStream rollback (restart from an
 * older copy of its store). Behind `--own-cassandra`, Cassandra: restart (kill -9 or graceful).
 * Each resolves once the service answers again, also when it fails. Only ever the round's own
 * instances: the shared ones serve every other suite (docs/faults.md).
 */
import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { frac } from './faults-embedded.ts';
import { now } from './history.ts';
import type { FaultActions, FaultOutcome } from './nemesis.ts';
import type { PrivateService, PrivateServices } from './private-services.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Copies of the Redis data and the JetStream store, taken when the round's traffic starts. */
export class ServiceSnapshots {
  private constructor(
    readonly dir: string,
    private readonly services: PrivateServices,
  ) {}

  static async take(services: PrivateServices, dir: string): Promise<ServiceSnapshots> {
    await mkdir(dir, { recursive: true });
    // Redis write(2)s its AOF before it answers, and the AOF is append-only: a copy of the running
    // files is a prefix of it, a state Redis was in (a torn last command is dropped on load,
    // aof-load-truncated). Only a rewrite swaps files under the copy: none may be running.
    const persistence = await services.redisCli('INFO', 'persistence');
    if (!/aof_rewrite_in_progress:0/.test(persistence) || !/aof_rewrite_scheduled:0/.test(persistence))
      throw new Error('redis: an AOF rewrite is running, no snapshot taken');
    await cp(services.dataDir('redis'), join(dir, 'redis'), { recursive: true });
    // JetStream's files are copied with the server stopped: a copy of a running store may be torn.
    await restart(services, 'nats', { crash: false, downMs: 0 }, () =>
      cp(services.dataDir('nats'), join(dir, 'nats'), { recursive: true }),
    );
    return new ServiceSnapshots(dir, services);
  }

  async restore(svc: PrivateService): Promise<void> {
    await rm(this.services.dataDir(svc), { recursive: true, force: true });
    await cp(join(this.dir, svc), this.services.dataDir(svc), { recursive: true });
  }
}

/**
 * Stops (SIGTERM, or SIGKILL for a crash) and starts again; `between` runs while it is down.
 * Resolves with when it was down (history clock): the old instance acknowledged nothing after.
 */
async function restart(
  services: PrivateServices,
  svc: PrivateService,
  o: { crash: boolean; downMs: number },
  between?: () => Promise<void>,
): Promise<number> {
  try {
    await services.sh(o.crash ? 'kill' : 'stop', svc);
    const stopped = now();
    await between?.();
    await sleep(o.downMs);
    return stopped;
  } finally {
    await services.sh('start', svc);
  }
}

/** The faults of the services the round runs privately (`services.has`), and of no other. */
export function serviceFaults(services: PrivateServices, snapshots: () => ServiceSnapshots | undefined): Partial<FaultActions> {
  /**
   * One service fault at a time: two restarts of one service would trip over each other (and
   * services.sh serializes the commands of one state dir anyway).
   */
  let busy = false;
  const one = async (f: () => Promise<FaultOutcome>): Promise<FaultOutcome | null> => {
    if (busy) return null;
    busy = true;
    try {
      return await f();
    } finally {
      busy = false;
    }
  };
  /** Stopped, down for up to `maxDownMs` (then its start: under a second, Cassandra's 7–12 s), started. */
  const bounce = (svc: PrivateService, r: number, maxDownMs = 2000) =>
    one(async () => {
      const crash = r < 0.5;
      const downMs = Math.floor(frac(r, 7919) * maxDownMs);
      const stopped = await restart(services, svc, { crash, downMs });
      return { target: svc, stopped, detail: `${crash ? 'kill -9' : 'graceful stop'}, ${downMs} ms down, start` };
    });
  const rollback = (svc: PrivateService, r: number) =>
    one(async () => {
      const snap = snapshots();
      if (!snap) return { target: svc, detail: 'no snapshot: skipped' };
      const downMs = Math.floor(frac(r, 7919) * 2000);
      const stopped = await restart(services, svc, { crash: false, downMs }, () => snap.restore(svc));
      return {
        target: svc,
        stopped,
        detail: `graceful stop, restart from the copy taken at the round's start (${snap.dir}), ${downMs} ms down`,
      };
    });
  const faults: Partial<FaultActions> = {
    'redis-flushall': () =>
      one(async () => {
        const answer = await services.redisCli('FLUSHALL');
        if (!answer.includes('OK')) throw new Error(`FLUSHALL answered ${answer}`);
        return { target: 'redis', detail: 'FLUSHALL' };
      }),
    'redis-restart': (r) => bounce('redis', r),
    'redis-rollback': (r) => rollback('redis', r),
    'nats-restart': (r) => bounce('nats', r),
    'nats-rollback': (r) => rollback('nats', r),
    'cassandra-restart': (r) => bounce('cassandra', r, 3000),
  };
  const ofService = (kind: string) => kind.slice(0, kind.indexOf('-')) as PrivateService;
  return Object.fromEntries(Object.entries(faults).filter(([kind]) => services.has(ofService(kind))));
}
