/**
 * The distributed stack as the system under test: worker and gateway processes
 * (apps/worker/test/support/cluster.ts) in a namespace of their own, on the shared services or,
 * with service faults, on a private Redis and NATS (`serviceEnv`: REDIS_URL, NATS_URL), in the
 * keyspace `SEQLINE_E2E_KEYSPACE` names (give the campaign one of its own: two clusters in one
 * keyspace fence each other's shards).
 */
import { shardOf, inboxKey } from '@seqline/core';
import { Cluster, SHARDS, type NodeProcess } from '../../../apps/worker/test/support/cluster.ts';
import type { Clocks, SystemUnderTest } from './system.ts';

export class DistributedSystem implements SystemUnderTest {
  readonly mode = 'distributed' as const;
  /** Processes a fault is acting on now: another fault leaves them alone. */
  readonly busy = new Set<NodeProcess>();

  private constructor(readonly cluster: Cluster) {}

  static async start(o: {
    workers: number;
    gateways: number;
    clocks: Clocks;
    hookEnv: Record<string, string>;
    /** The services' URLs when they are not the shared ones. */
    serviceEnv: Record<string, string>;
  }): Promise<DistributedSystem> {
    const cluster = await Cluster.start({
      workers: o.workers,
      gateways: o.gateways,
      env: { ...o.clocks.env(), ...o.hookEnv, ...o.serviceEnv },
    });
    for (const p of [...cluster.workers, ...cluster.gateways]) await o.clocks.write(p.name);
    return new DistributedSystem(cluster);
  }

  get tenant(): string {
    return this.cluster.tenant;
  }

  processes(): NodeProcess[] {
    return [...this.cluster.workers, ...this.cluster.gateways];
  }

  wsBases(): string[] {
    return this.cluster.gateways.map((g) => `ws://127.0.0.1:${g.port}`);
  }

  httpBase(): string {
    const up = this.cluster.gateways.find((g) => g.alive) ?? this.cluster.gateways[0];
    if (!up) throw new Error('no gateway');
    return up.httpUrl;
  }

  userShard(user: string): number {
    return shardOf(inboxKey(this.tenant, user), SHARDS);
  }

  /** Every process alive and every shard served by exactly one worker, quiet for two lease ttls. */
  async healthy(timeoutMs: number): Promise<void> {
    for (const p of this.processes()) if (!p.alive) await p.start();
    await this.cluster.waitBalanced(timeoutMs);
  }

  async close(): Promise<void> {
    await this.cluster.close();
  }
}
