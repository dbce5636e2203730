/**
 * Faults of the shared services, behind `--service-faults` (they stop every other user of the
 * services too: never beside other suites). Redis: FLUSHALL; restart; rollback (restart from a
 * copy of its data directory taken earlier in the round). NATS: restart; JetStream rollback
 * (restart from an older copy of its store directory). Cassandra: restart. Each waits until the
 * service answers again (ensureUp), also when it fails.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureUp, redisFlushAll, REDIS_URL, REPO_ROOT, servicesSh, type ServiceName } from '../../../apps/worker/test/support/services.ts';
import { frac } from './faults-embedded.ts';
import type { FaultActions, FaultOutcome } from './nemesis.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const DATA = {
  redis: join(REPO_ROOT, '.services/redis/data'),
  nats: join(REPO_ROOT, '.services/nats/store'),
} as const;

/** Copies of the Redis data and the JetStream store, taken when the round starts (NATS restarts for it). */
export class ServiceSnapshots {
  private constructor(readonly dir: string) {}

  static async take(dir: string): Promise<ServiceSnapshots> {
    await mkdir(dir, { recursive: true });
    const url = new URL(REDIS_URL);
    // A fresh RDB beside the AOF, so the copy is a whole dataset of this moment.
    await run('redis-cli', ['-h', url.hostname, '-p', url.port || '6379', 'SAVE']);
    await cp(DATA.redis, join(dir, 'redis'), { recursive: true });
    // JetStream's files are copied with the server stopped: a copy of a running store may be torn.
    await restart('nats', 0, () => cp(DATA.nats, join(dir, 'nats'), { recursive: true }));
    return new ServiceSnapshots(dir);
  }

  async restore(svc: 'redis' | 'nats'): Promise<void> {
    await rm(DATA[svc], { recursive: true, force: true });
    await cp(join(this.dir, svc), DATA[svc], { recursive: true });
  }
}

async function restart(svc: ServiceName, downMs: number, between?: () => Promise<void>): Promise<void> {
  try {
    await servicesSh('stop', svc);
    await between?.();
    await sleep(downMs);
    await servicesSh('start', svc);
  } finally {
    await ensureUp(svc);
  }
}

export function serviceFaults(snapshots: () => ServiceSnapshots | undefined): Partial<FaultActions> {
  /** One service fault at a time: two restarts of one service would trip over each other. */
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
  const rollback = (svc: 'redis' | 'nats', r: number) =>
    one(async () => {
      const snap = snapshots();
      if (!snap) return { target: svc, detail: 'no snapshot: skipped' };
      await restart(svc, Math.floor(frac(r, 7919) * 2000), () => snap.restore(svc));
      return { target: svc, detail: `restart from the copy taken at the round's start (${snap.dir})` };
    });
  return {
    'redis-flushall': () =>
      one(async () => {
        await redisFlushAll();
        return { target: 'redis', detail: 'FLUSHALL' };
      }),
    'redis-restart': (r) =>
      one(async () => {
        await restart('redis', Math.floor(r * 2000));
        return { target: 'redis', detail: 'stop, start' };
      }),
    'redis-rollback': (r) => rollback('redis', r),
    'nats-restart': (r) =>
      one(async () => {
        await restart('nats', Math.floor(r * 2000));
        return { target: 'nats', detail: 'stop, start' };
      }),
    'nats-rollback': (r) => rollback('nats', r),
    'cassandra-restart': (r) =>
      one(async () => {
        await restart('cassandra', Math.floor(r * 3000));
        return { target: 'cassandra', detail: 'stop, start' };
      }),
  };
}
