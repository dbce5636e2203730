/**
 * The live shard owners as one host last saw them in the owner registry, and since when that set
 * has been unchanged: the host gives back shards it is not the preferred owner of only once the
 * set has been stable for a lease ttl (shard-owner-host.ts).
 */
import type { Logger } from '@seqline/core';
import type { RedisOwnerRegistry } from './owner-registry.ts';
import { errMessage } from './shard-leases.ts';

export class LiveOwners {
  /** The owners last seen, sorted and comma-joined; '' before the first round. */
  private members = '';
  private membersSince = 0;

  constructor(
    private readonly registry: RedisOwnerRegistry,
    private readonly ownerId: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** When the set last changed, on the host's clock (0 before the first round). */
  get stableSince(): number {
    return this.membersSince;
  }

  /**
   * Heartbeats this owner and returns the live owners, sorted, this one included. While the
   * registry fails, the set last seen stands in for it.
   */
  async refresh(): Promise<string[]> {
    let live: string[];
    try {
      live = await this.registry.heartbeat(this.ownerId);
    } catch (err) {
      this.logger.warn({ err: errMessage(err) }, 'owner registry heartbeat failed');
      live = this.members === '' ? [] : this.members.split(',');
    }
    if (!live.includes(this.ownerId)) live = [...live, this.ownerId].sort();
    const key = live.join(',');
    if (key !== this.members) {
      if (this.members !== '') this.logger.info({ owners: live }, 'shard owners changed');
      this.members = key;
      this.membersSince = this.now();
    }
    return live;
  }
}
