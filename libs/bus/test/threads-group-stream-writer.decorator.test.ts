/**
 * ThreadGroupStreamWriter in front of its own thread's group writer (every shard is this
 * thread's): an append reaches the writer with everything the caller gave.
 */
import { silentLogger } from '@seqline/core';
import { groupStreamAppenderDecoratorContract } from '@seqline/testing';
import { ThreadGroupStreamWriter, ThreadHub } from '../src/threads.ts';

groupStreamAppenderDecoratorContract('ThreadGroupStreamWriter, shards owned in place', async (inner) => {
  const hub = new ThreadHub({ self: 0 });
  const appender = new ThreadGroupStreamWriter({ hub, threads: 1, owner: inner, shardCount: 8, logger: silentLogger });
  return {
    appender,
    close: async () => {
      await appender.close();
      await hub.close();
    },
  };
});
