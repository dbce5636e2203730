import { SeqlineError } from '@seqline/core';

/**
 * The inbox hashes to a shard this owner does not hold (distributed mode routed it to the
 * wrong process, or the shard moved). The caller should re-resolve the owner and retry.
 */
export class ShardNotOwnedError extends SeqlineError {
  constructor(
    readonly shard: number,
    inbox: string,
  ) {
    super('INTERNAL', `shard ${shard} (inbox ${inbox}) is not owned by this process`);
  }
}

/** The owner is closing (shutdown or handing its shards over): retry against the next owner. */
export class InboxOwnerClosedError extends SeqlineError {
  constructor() {
    super('OVERLOADED', 'inbox owner is closing, retry later');
  }
}
