/**
 * What one thread of a threaded server adds to the embedded composition: its place on the
 * thread hub (the buses go over it), the device bus carrying logins to the other threads'
 * sockets, and a metrics registry whose text (GET /metrics on whichever thread gets the
 * request) merges every thread's metrics, as prom-client merges a cluster's workers.
 */
import { AggregatorRegistry, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { DeviceBusFactory, Logger } from '@seqline/core';
import { createThreadDeviceBus, type ThreadHub } from '@seqline/bus/threads';
import type { PoolCounters, QueueCounters } from '@seqline/messaging';
import type { ThreadPlace } from './thread-deps.ts';

type Counters = { queues: Record<string, QueueCounters>; pools: Record<string, PoolCounters> };

export interface ServerThreadParts {
  place: ThreadPlace;
  deviceBus: DeviceBusFactory;
  metrics: Registry;
  /**
   * The admin API's queue and pool counters for the process: this thread's `local` ones summed
   * with every other thread's (each runs its own consumers and pools).
   */
  countersOfProcess(local: () => Counters): { queueStats: () => Promise<Counters['queues']>; poolStats: () => Promise<Counters['pools']> };
}

type MetricsJson = Array<MetricObjectWithValues<MetricValue<string>>>;

/** This thread's registry: its own metrics locally, every thread's merged in its text. */
class ThreadsRegistry extends Registry {
  constructor(private readonly others: () => Promise<MetricsJson[]>) {
    super();
  }

  override async metrics(): Promise<string> {
    const all = [await this.getMetricsAsJSON(), ...(await this.others())];
    return AggregatorRegistry.aggregate(all).metrics();
  }
}

export function serverThreadParts(hub: ThreadHub, threads: number, logger: Logger): ServerThreadParts {
  const registry: ThreadsRegistry = new ThreadsRegistry(async () => {
    // A thread gone (or closing) is left out of this answer; the next scrape has it again.
    const answers = await Promise.allSettled(channel.live().map((thread) => channel.request(thread, { op: 'metrics' })));
    return answers.flatMap((a) => (a.status === 'fulfilled' && Array.isArray(a.value) ? [a.value as MetricsJson] : []));
  });
  const channel = hub.open('metrics', { onRequest: () => registry.getMetricsAsJSON() });
  let localCounters: () => Counters = () => ({ queues: {}, pools: {} });
  const counters = hub.open('counters', { onRequest: () => localCounters() });
  const ofProcess = async (): Promise<Counters> => {
    const answers = await Promise.allSettled(counters.live().map((thread) => counters.request(thread, { op: 'counters' })));
    const others = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value as Counters] : []));
    return sumCounters([localCounters(), ...others]);
  };
  return {
    place: { hub, threads },
    deviceBus: (holder) => createThreadDeviceBus(holder, { hub, logger }),
    metrics: registry,
    countersOfProcess(local) {
      localCounters = local;
      return { queueStats: async () => (await ofProcess()).queues, poolStats: async () => (await ofProcess()).pools };
    },
  };
}

/** Counts add up across threads; a pool's limits too (each thread has its pool), the per-group bound is each thread's. */
function sumCounters(all: Counters[]): Counters {
  const sum: Counters = { queues: {}, pools: {} };
  for (const { queues, pools } of all) {
    for (const [name, q] of Object.entries(queues)) {
      const s = (sum.queues[name] ??= { running: 0, waiting: 0, delayed: 0 });
      s.running += q.running;
      s.waiting += q.waiting;
      s.delayed += q.delayed;
    }
    for (const [name, p] of Object.entries(pools)) {
      const s = (sum.pools[name] ??= { running: 0, waiting: 0, poolLimit: 0, perGroupLimit: p.perGroupLimit });
      s.running += p.running;
      s.waiting += p.waiting;
      s.poolLimit += p.poolLimit;
    }
  }
  return sum;
}
