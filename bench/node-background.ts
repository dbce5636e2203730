/**
 * The Cassandra node's own background work (memtable flushes and compactions, from
 * `system_views.thread_pools`): a compaction takes most of a core for seconds, so a latency
 * figure means little without knowing whether one ran in its window.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from 'cassandra-driver';
import { sleep } from './support.ts';

const POOLS = { compaction: 'CompactionExecutor', flush: 'MemtableFlushWriter' } as const;

interface PoolCount {
  running: number;
  completed: number;
}
export type NodeBackground = Record<keyof typeof POOLS, PoolCount>;

export async function nodeBackground(client: Client): Promise<NodeBackground> {
  const rows = (
    await client.execute(
      `SELECT name, active_tasks, pending_tasks, completed_tasks FROM system_views.thread_pools WHERE name IN ('${POOLS.compaction}', '${POOLS.flush}')`,
    )
  ).rows;
  const of = (name: string): PoolCount => {
    const row = rows.find((r) => r.get('name') === name);
    return row === undefined
      ? { running: 0, completed: 0 }
      : { running: Number(row.get('active_tasks')) + Number(row.get('pending_tasks')), completed: Number(row.get('completed_tasks')) };
  };
  return { compaction: of(POOLS.compaction), flush: of(POOLS.flush) };
}

/** What ran between two readings, e.g. "1 flush tasks and 2 compaction tasks finished, 1 compaction task(s) still running". */
export function describeBackground(before: NodeBackground, after: NodeBackground): string {
  const done = (k: keyof NodeBackground, word: string) => `${after[k].completed - before[k].completed} ${word}`;
  const running = (['flush', 'compaction'] as const)
    .filter((k) => after[k].running > 0)
    .map((k) => `${after[k].running} ${k} task(s) still running`);
  return [`${done('flush', 'flush tasks')} and ${done('compaction', 'compaction tasks')} finished`, ...running].join(', ');
}

/** Waits (at most `maxMs`) until the node runs no compaction or flush; says how long it took. */
export async function nodeSettled(client: Client, maxMs: number): Promise<string> {
  const started = performance.now();
  const busy = async () => {
    const now = await nodeBackground(client);
    return now.compaction.running + now.flush.running > 0;
  };
  while (await busy()) {
    if (performance.now() - started > maxMs) return `measured while the node was still compacting (waited ${maxMs / 1000} s)`;
    await sleep(500);
  }
  return `waited ${((performance.now() - started) / 1000).toFixed(1)} s for the node's compactions and flushes`;
}
