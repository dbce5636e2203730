/** The store bench's closed loop, and the CPU split (this process vs the Cassandra node) it measures. */
import { performance } from 'node:perf_hooks';
import { cpuSecondsOf, servicePid, sleep } from './support.ts';

/** Ops in flight in a closed loop. */
export const CONCURRENCY = 256;

export interface Slice {
  ops: number;
  errors: number;
  ms: number;
  cpu: CpuSplit;
}

/** CPU seconds spent during a slice by this process (client + driver) and by the Cassandra node. */
export interface CpuSplit {
  client: number;
  cassandra: number | undefined;
}

async function cpuNow(cassandra: number | undefined): Promise<CpuSplit> {
  const self = process.cpuUsage();
  return {
    client: (self.user + self.system) / 1e6,
    cassandra: cassandra === undefined ? undefined : await cpuSecondsOf(cassandra).catch(() => undefined),
  };
}

function cpuSince(start: CpuSplit, end: CpuSplit): CpuSplit {
  const cassandra = start.cassandra === undefined || end.cassandra === undefined ? undefined : end.cassandra - start.cassandra;
  return { client: end.client - start.client, cassandra };
}

/** Closed loop, `CONCURRENCY` ops outstanding for `ms`. Failed ops (a restarting node) are counted, not fatal. */
export async function closedLoop(ms: number, op: (i: number) => Promise<unknown>): Promise<Slice> {
  const node = await servicePid('cassandra');
  const cpu0 = await cpuNow(node);
  const start = performance.now();
  const end = start + ms;
  let next = 0;
  let ops = 0;
  let errors = 0;
  const lane = async () => {
    while (performance.now() < end) {
      try {
        await op(next++);
        ops++;
      } catch {
        errors++;
        await sleep(50);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const elapsed = performance.now() - start;
  return { ops, errors, ms: elapsed, cpu: cpuSince(cpu0, await cpuNow(node)) };
}

export class Tally {
  entries = 0;
  ms = 0;
  errors = 0;
  client = 0;
  cassandra: number | undefined = 0;
  add(s: Slice, per = 1): void {
    this.entries += s.ops * per;
    this.ms += s.ms;
    this.errors += s.errors;
    this.client += s.cpu.client;
    this.cassandra = this.cassandra === undefined || s.cpu.cassandra === undefined ? undefined : this.cassandra + s.cpu.cassandra;
  }
  get rate(): number {
    return this.entries / (this.ms / 1000);
  }
  /** CPU µs per entry written, this process and the node (the node's includes its flushes and compactions meanwhile). */
  get cpuPerEntry(): string {
    const us = (seconds: number) => `${((seconds * 1e6) / Math.max(1, this.entries)).toFixed(1)} µs`;
    return `client ${us(this.client)}, Cassandra ${this.cassandra === undefined ? 'n/a (no pid file)' : us(this.cassandra)}`;
  }
}
