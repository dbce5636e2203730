/**
 * Builds ShardOwnerHosts, RemoteInboxWriters and RemoteGroupStreamWriters that share one test
 * run's prefixes and store.
 */
import { afterEach } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import type { Entry, GroupKey, GroupStreamReader, InboxKey, TimelineReader } from '@seqline/core';
import { RemoteGroupStreamWriter, RemoteInboxWriter, ShardOwnerHost } from '../../src/index.ts';
import type { RemoteWriterOptions, ShardOwnerHostOptions } from '../../src/index.ts';
import { MemoryLogger, RecordingPushBus } from './doubles.ts';
import { deletePrefix, uniqueId } from './services.ts';
import type { SuiteServices, TempStore } from './services.ts';

export interface ClusterRig {
  keyPrefix: string;
  subjectPrefix: string;
  shardCount: number;
  ttl: number;
  logger: MemoryLogger;
  host(ownerId: string, extra?: Partial<ShardOwnerHostOptions>): ShardOwnerHost & { push: RecordingPushBus };
  writer(extra?: Partial<RemoteWriterOptions>): RemoteInboxWriter;
  groupWriter(extra?: Partial<RemoteWriterOptions>): RemoteGroupStreamWriter;
  /** Closes every host and writer made here and deletes the run's Redis keys. */
  cleanup(): Promise<void>;
}

export function clusterRig(deps: { nc: NatsConnection; redis: Redis; store: TempStore; shardCount: number; ttl: number }): ClusterRig {
  const keyPrefix = uniqueId('seqline-test:cluster:') + ':';
  const subjectPrefix = uniqueId('test.inbox.append.');
  const logger = new MemoryLogger();
  const hosts: ShardOwnerHost[] = [];
  const writers: Array<{ close(): Promise<void> }> = [];
  const writerOptions = (extra: Partial<RemoteWriterOptions>): RemoteWriterOptions => ({
    nc: deps.nc,
    shardCount: deps.shardCount,
    subjectPrefix,
    requestTimeoutMs: 1000,
    deadlineMs: 20_000,
    ...extra,
  });
  return {
    keyPrefix,
    subjectPrefix,
    shardCount: deps.shardCount,
    ttl: deps.ttl,
    logger,
    host(ownerId, extra = {}) {
      const push = new RecordingPushBus();
      const host = new ShardOwnerHost({
        nc: deps.nc,
        redis: deps.redis,
        ceilings: deps.store.engine.ceilings,
        timeline: deps.store.engine.timeline,
        groupStreams: deps.store.engine.groupStreams,
        push,
        logger: logger.child({ host: ownerId }),
        ownerId,
        shardCount: deps.shardCount,
        leaseTtlMs: deps.ttl,
        keyPrefix,
        subjectPrefix,
        ...extra,
      });
      hosts.push(host);
      return Object.assign(host, { push });
    },
    writer(extra = {}) {
      const w = new RemoteInboxWriter(writerOptions(extra));
      writers.push(w);
      return w;
    },
    groupWriter(extra = {}) {
      const w = new RemoteGroupStreamWriter(writerOptions(extra));
      writers.push(w);
      return w;
    },
    async cleanup() {
      await Promise.all(writers.map((w) => w.close()));
      await Promise.all(hosts.map((h) => h.close()));
      await deletePrefix(deps.redis, keyPrefix);
    },
  };
}

/** Every stored entry of an inbox, ascending. */
export function readAll(timeline: Pick<TimelineReader, 'readAfter'>, inbox: InboxKey): Promise<Entry[]> {
  return readPages((afterSeq) => timeline.readAfter({ inbox, afterSeq, limit: 500 }));
}

/** Every stored entry of a group stream, ascending. */
export function readAllOfGroup(streams: Pick<GroupStreamReader, 'readAfter'>, group: GroupKey): Promise<Entry[]> {
  return readPages((afterGseq) => streams.readAfter({ group, afterGseq, limit: 500 }));
}

async function readPages(pageAfter: (after: number) => Promise<Entry[]>): Promise<Entry[]> {
  const out: Entry[] = [];
  for (;;) {
    const page = await pageAfter(out.at(-1)?.seq ?? 0);
    if (page.length === 0) return out;
    out.push(...page);
  }
}

/**
 * A fresh ClusterRig per test on the suite's services (own key and subject prefixes), cleaned
 * up after the test: call the returned function at the start of each test.
 */
export function useRigPerTest(svc: SuiteServices, shape: { shardCount: number; ttl: number }): () => ClusterRig {
  let rig: ClusterRig | undefined;
  afterEach(async () => {
    await rig?.cleanup();
    rig = undefined;
  });
  return () => (rig = clusterRig({ ...svc, ...shape }));
}
