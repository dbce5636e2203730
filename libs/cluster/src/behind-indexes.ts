/**
 * The inboxes of each shard whose conversation index an owner left behind its entries (an index
 * write that failed after the entries were stored), kept in Redis beside the shard's lease
 * (`<prefix>index-behind:<shard>`, a set): the owner adds an inbox when its index write fails
 * and removes it once a catch-up indexed every entry; whoever serves the shard next — this
 * process under a new epoch after a Redis fault, or another one — reads the set when it starts
 * serving and catches those inboxes up (InboxOwner.catchUpConversations), so an index left
 * behind does not wait for the inbox's next append.
 *
 * Bounded: a set holds at most `maxPerShard` inboxes (an add past that is refused and logged;
 * that inbox is caught up by its owner's own retries or its next append). Best effort: a lost
 * add (Redis down, flushed after it) leaves the index to the inbox's next append, as before.
 */
import type { InboxKey, Logger } from '@seqline/core';
import type { BehindIndexLog } from '@seqline/seq';
import type { Redis } from 'ioredis';
import { errMessage } from './shard-leases.ts';

export const DEFAULT_MAX_BEHIND_PER_SHARD = 10_000;

/** KEYS[1] the shard's set; ARGV inbox, bound → 1 added (or present), 0 refused at the bound. */
const ADD_BOUNDED_LUA = `if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
return redis.call('SADD', KEYS[1], ARGV[1])`;

/** One shard's record: what its owner tells, and what its next owner reads. */
export interface ShardBehindIndexes extends BehindIndexLog {
  /** The inboxes recorded now (at most the bound). */
  list(): Promise<InboxKey[]>;
}

export class RedisBehindIndexes {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly logger: Logger,
    private readonly maxPerShard: number = DEFAULT_MAX_BEHIND_PER_SHARD,
  ) {}

  forShard(shard: number): ShardBehindIndexes {
    const key = `${this.keyPrefix}index-behind:${shard}`;
    return {
      behind: (inbox) => {
        this.redis.eval(ADD_BOUNDED_LUA, 1, key, inbox, this.maxPerShard).then(
          (added) => {
            if (added !== 1) this.logger.warn({ shard, inbox, bound: this.maxPerShard }, 'index-behind record full; inbox not recorded');
          },
          (err: unknown) => this.logger.warn({ shard, inbox, err: errMessage(err) }, 'index-behind record not written'),
        );
      },
      caughtUp: (inbox) => {
        this.redis.srem(key, inbox).catch((err: unknown) => {
          this.logger.warn({ shard, inbox, err: errMessage(err) }, 'index-behind record not cleared');
        });
      },
      list: async () => (await this.redis.smembers(key)) as InboxKey[],
    };
  }
}
