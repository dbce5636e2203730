/**
 * The WriteGuard a fenced store hands to the store it wraps: the caller's guard, then the lease
 * check, synchronously, before each write round trip. Its term names the lease (shard and
 * epoch), so a store that remembers a stream's head between appends forgets it when the lease
 * changes hands — even when it comes back to this process under a new epoch.
 */
import type { WriteGuard } from '@seqline/core';
import { ShardLeaseLostError } from './errors.ts';

export function leaseGuard(shard: number, epoch: number | undefined, blocker: () => string | undefined, outer?: WriteGuard): WriteGuard {
  const check = () => {
    outer?.();
    const lost = blocker();
    if (lost !== undefined) throw new ShardLeaseLostError(shard, lost);
  };
  const mine = epoch === undefined ? undefined : `shard-${shard}@${epoch}`;
  const term = [outer?.term, mine].filter((part) => part !== undefined).join('/');
  return term === '' ? check : Object.assign(check, { term });
}
