/**
 * The parts of the embedded deps that differ when the process runs several threads over the one
 * LMDB environment (docs/decisions.md, "Threads embedded"): thread i owns the inbox and group
 * shards s ≡ i (mod N); the bus ports go over the thread hub (@seqline/bus/threads) where one
 * thread uses the in-process ones.
 */
import { DEFAULT_SHARD_COUNT, type Clock, type Logger, type PushBus } from '@seqline/core';
import { createLocalPushBus, createLocalWorkQueue, type LocalWorkQueue } from '@seqline/bus/local';
import {
  createThreadPushBus,
  createThreadWorkQueue,
  shardsOfThread,
  ThreadGroupStreamWriter,
  ThreadInboxWriter,
  type ThreadHub,
} from '@seqline/bus/threads';
import { groupKeyOfPayload, senderKeyOfPayload, type LiveSettings, type MessagingWriters } from '@seqline/messaging';
import type { GroupStreamWriter, InboxOwner } from '@seqline/seq';
import type { EmbeddedEngine } from '@seqline/store';

/** This thread's place among the threads of the process. */
export interface ThreadPlace {
  hub: ThreadHub;
  /** Threads owning shards, numbered 0..threads-1 on the hub. */
  threads: number;
}

/** The buses of one thread, or of the one-thread process when `place` is absent. */
export interface EmbeddedBuses {
  push: PushBus & { close(): Promise<void> };
  queue: LocalWorkQueue;
  /** This thread's shards (undefined: every shard, one thread). */
  ownedShards: number[] | undefined;
  /** The threads sharing each SEQLINE_MAX_* bound (each holds its share). */
  threads: number;
  /** The writers every caller uses: the owners themselves, or the thread writers routing to them. */
  writers(inbox: InboxOwner, groupStream: GroupStreamWriter, logger: Logger): MessagingWriters & { close(): Promise<void> };
  /** An admin change saved here is applied by the other threads at once, not at their next poll. */
  relaySettings(settings: LiveSettings, logger: Logger): { close(): Promise<void> };
}

export function embeddedBuses(engine: EmbeddedEngine, logger: Logger, clock: Clock, place?: ThreadPlace): EmbeddedBuses {
  if (place === undefined) {
    return {
      push: createLocalPushBus({ logger }),
      queue: createLocalWorkQueue({ jobs: engine.jobs, logger, clock }),
      ownedShards: undefined,
      threads: 1,
      writers: (inbox, groupStream) => ({ inbox, groupStream, close: async () => {} }),
      relaySettings: () => ({ close: async () => {} }),
    };
  }
  const { hub, threads } = place;
  return {
    push: createThreadPushBus({ hub, logger }),
    queue: createThreadWorkQueue({
      hub,
      threads,
      jobs: engine.jobs,
      logger,
      clock,
      // A group's jobs run on one thread (its per-group bound holds for the process), and a
      // receipt job on the thread owning its sender's inbox, where its append runs in place.
      placeKeyOf: (job) => groupKeyOfPayload(job.payload) ?? senderKeyOfPayload(job.payload),
    }),
    ownedShards: shardsOfThread(hub.self, threads, DEFAULT_SHARD_COUNT),
    threads,
    writers(inbox, groupStream, log) {
      const inboxWriter = new ThreadInboxWriter({ hub, threads, owner: inbox, logger: log });
      const groupWriter = new ThreadGroupStreamWriter({ hub, threads, owner: groupStream, logger: log });
      return {
        inbox: inboxWriter,
        groupStream: groupWriter,
        close: async () => {
          await Promise.all([inboxWriter.close(), groupWriter.close()]);
        },
      };
    },
    relaySettings(settings, log) {
      const channel = hub.open('settings', {
        onMessage: () => {
          settings.refresh().catch((err: unknown) => log.warn({ err }, 'settings refresh after a change elsewhere failed'));
        },
      });
      const stop = settings.onChange(() => channel.broadcast({ op: 'changed' }));
      return {
        close: async () => {
          stop();
          await channel.close();
        },
      };
    },
  };
}
