/**
 * CPU accounting of one step: the load generator (this process), the system's server processes,
 * its stores, and everything else on the machine ("other load": the step's figures mean little
 * when others took the cores meanwhile).
 */
import { performance } from 'node:perf_hooks';
import { cpuSecondsOf, cpuTimes, rssOf, sleep } from '../support.ts';
import { median } from '../stats.ts';
import type { PeerSystem } from './system.ts';

export interface StepLoad {
  seconds: number;
  /** CPU-seconds all cores had in the step. */
  capacity: number;
  loadgen: number;
  processes: number;
  stores: number;
  /** CPU-seconds of every other process. */
  others: number;
}

async function sum(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) total += await cpuSecondsOf(pid).catch(() => 0);
  return total;
}

const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Starts counting; the returned function ends the step and says where the CPU went. */
export async function startMeter(system: PeerSystem): Promise<() => Promise<StepLoad>> {
  const procPids = system.processes.map((p) => p.pid);
  const storePids = system.stores.map((p) => p.pid);
  const t0 = performance.now();
  const [machine0, own0, proc0, store0] = [await cpuTimes(), ownCpu(), await sum(procPids), await sum(storePids)];
  return async () => {
    const [machine1, own1, proc1, store1] = [await cpuTimes(), ownCpu(), await sum(procPids), await sum(storePids)];
    const capacity = Math.max(1e-9, (machine1.total - machine0.total) / 100); // USER_HZ 100
    const busy = (machine1.busy - machine0.busy) / 100;
    const loadgen = own1 - own0;
    const processes = proc1 - proc0;
    const stores = store1 - store0;
    return {
      seconds: (performance.now() - t0) / 1000,
      capacity,
      loadgen,
      processes,
      stores,
      others: Math.max(0, busy - loadgen - processes - stores),
    };
  };
}

export const othersShare = (l: StepLoad): number => l.others / l.capacity;

export function describeLoad(l: StepLoad): string {
  const pct = (s: number) => `${Math.round((100 * s) / l.capacity)}%`;
  return `${l.seconds.toFixed(1)} s; share of all cores: load generator ${pct(l.loadgen)}, server processes ${pct(l.processes)}, stores ${pct(l.stores)}, other load ${pct(l.others)}`;
}

/** Median of a few VmRSS readings (summed over `pids`), spaced out: one reading can land mid-GC. */
export async function settledRss(pids: number[]): Promise<number> {
  await sleep(1500);
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    let total = 0;
    for (const pid of pids) total += await rssOf(pid);
    readings.push(total);
    await sleep(200);
  }
  return median(readings);
}
