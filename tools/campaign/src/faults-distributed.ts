/**
 * Process faults of the distributed stack (its own workers and gateways only): kill -9 of a
 * worker or a gateway (restarted after a random pause), SIGSTOP of a shard owner until others
 * serve its shards (past its lease), then SIGCONT; a graceful rolling restart of every worker;
 * a wall-clock jump of one process; a 30-minute outage of every worker. Service faults are
 * in service-faults.ts, behind `--service-faults`.
 */
import type { NodeProcess } from '../../../apps/worker/test/support/cluster.ts';
import { frac, OUTAGE_MS } from './faults-embedded.ts';
import type { FaultActions, FaultOutcome } from './nemesis.ts';
import type { Clocks } from './system.ts';
import type { DistributedSystem } from './system-distributed.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function distributedFaults(sys: DistributedSystem, clocks: Clocks): FaultActions {
  const { cluster } = sys;
  /** Runs `f` on processes no other fault holds; null (skipped) when there are none. */
  const holding = async (procs: NodeProcess[], f: (p: NodeProcess[]) => Promise<FaultOutcome>): Promise<FaultOutcome | null> => {
    if (procs.length === 0 || procs.some((p) => sys.busy.has(p))) return null;
    for (const p of procs) sys.busy.add(p);
    try {
      return await f(procs);
    } finally {
      for (const p of procs) sys.busy.delete(p);
    }
  };
  const free = (list: NodeProcess[]) => list.filter((p) => p.alive && !sys.busy.has(p));
  const pick = (list: NodeProcess[], r: number) => {
    const candidates = free(list);
    const p = candidates[Math.floor(r * candidates.length)];
    return p ? [p] : [];
  };
  const killWorker = (r: number, detail: string) =>
    holding(pick(cluster.workers, r), async ([w]) => {
      const p = w as NodeProcess;
      const shards = [...p.serving];
      await p.kill9();
      await sleep(Math.floor(frac(r, 7919) * 2000));
      await p.start();
      return { target: p.name, shards, detail };
    });
  const actions: Partial<FaultActions> = {
    kill9: (r) => killWorker(r, 'kill -9 a worker, restart'),
    'kill9-fanout': (r) => killWorker(r, 'kill -9 a worker right after a group send was acknowledged'),
    'kill9-gateway': (r) =>
      holding(pick(cluster.gateways, r), async ([g]) => {
        const p = g as NodeProcess;
        await p.kill9();
        await sleep(Math.floor(frac(r, 7919) * 2000));
        await p.start();
        return { target: p.name, detail: 'kill -9 a gateway, restart' };
      }),
    sigstop: (r) => {
      if (cluster.workers.length < 2) return Promise.resolve(null);
      return holding(pick(cluster.workers, r), async ([w]) => {
        const p = w as NodeProcess;
        const shards = [...p.serving];
        const since = Date.now();
        p.sigstop();
        try {
          // Held until every shard it served is served by another worker: past its lease, taken over.
          const deadline = Date.now() + 30_000;
          while (Date.now() < deadline && !shards.every((s) => cluster.workers.some((o) => o !== p && o.alive && o.serving.has(s))))
            await sleep(100);
          await sleep(Math.floor(frac(r, 7919) * 2000));
        } finally {
          p.sigcont();
        }
        return { target: p.name, shards, detail: `SIGSTOP ${Date.now() - since} ms (lease ttl ${cluster.leaseTtlMs} ms), SIGCONT` };
      });
    },
    'rolling-restart': () =>
      holding(free(cluster.workers).length === cluster.workers.length ? cluster.workers : [], async (workers) => {
        for (const w of workers) {
          await w.terminate();
          await w.start();
          await cluster.waitBalanced(120_000);
        }
        return { target: 'workers', detail: `graceful restart of ${workers.length} workers, one at a time` };
      }),
    'clock-jump': async (r) => {
      const all = [...cluster.workers, ...cluster.gateways];
      const p = all[Math.floor(r * all.length)] as NodeProcess;
      const jump = Math.round((frac(r, 7919) < 0.5 ? -1 : 1) * (20_000 + frac(r, 104729) * 100_000));
      await clocks.set(p.name, jump);
      await sleep(1000 + Math.floor(frac(r, 15485863) * 4000));
      await clocks.set(p.name, 0);
      return { target: p.name, detail: `wall clock ${jump > 0 ? '+' : ''}${jump} ms, then back` };
    },
    outage30: () =>
      holding(free(cluster.workers).length === cluster.workers.length ? cluster.workers : [], async (workers) => {
        const shards = workers.flatMap((w) => [...w.serving]);
        await Promise.all(workers.map((w) => w.kill9()));
        await clocks.advanceWorld(
          OUTAGE_MS,
          [...cluster.workers, ...cluster.gateways].map((p) => p.name),
        );
        for (const w of workers) await w.start();
        return { target: 'workers', shards, detail: 'kill -9 every worker, 31 simulated minutes down, restart' };
      }),
  };
  return actions as FaultActions;
}
