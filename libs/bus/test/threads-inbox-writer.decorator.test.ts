/**
 * ThreadInboxWriter in front of its own thread's owner (every shard is this thread's): a call
 * reaches the owner with everything the caller gave.
 */
import { silentLogger } from '@seqline/core';
import { inboxWriterDecoratorContract } from '@seqline/testing';
import { ThreadHub, ThreadInboxWriter } from '../src/threads.ts';

inboxWriterDecoratorContract('ThreadInboxWriter, shards owned in place', async (inner) => {
  const hub = new ThreadHub({ self: 0 });
  const writer = new ThreadInboxWriter({ hub, threads: 1, owner: inner, shardCount: 8, logger: silentLogger });
  return {
    writer,
    close: async () => {
      await writer.close();
      await hub.close();
    },
  };
});
