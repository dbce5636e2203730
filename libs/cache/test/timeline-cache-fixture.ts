/** One embedded store and one Redis prefix per test file, and the helpers the timeline-cache files share. */
import { afterAll, beforeAll } from 'vitest';
import type { Redis } from 'ioredis';
import { inboxKey, type Entry, type InboxKey, type TimelineStore } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { msgEntry, uniqueTenant } from '@seqline/testing';
import { CachedTimelineStore, type CachedTimelineOptions } from '../src/index.ts';
import { connectRedis, deleteKeys, tempDir, uniquePrefix } from './harness.ts';

export interface TimelineCacheFixture {
  readonly keyPrefix: string;
  /** The durable store under every cache of the file (from beforeAll on). */
  readonly inner: TimelineStore;
  /** The file's Redis client (from beforeAll on). */
  readonly redis: Redis;
  /** A cache over `inner()`, closed after the file. */
  cached(options?: Partial<CachedTimelineOptions>, client?: Redis): CachedTimelineStore;
  /** A new inbox nobody wrote to. */
  fresh(): InboxKey;
  /** The Redis key of an inbox's cached entries (and dedup set). */
  tlKey(inbox: InboxKey): string;
  ddKey(inbox: InboxKey): string;
}

/** Registers the file's beforeAll/afterAll; call inside the describe. */
export function timelineCacheFixture(name: string): TimelineCacheFixture {
  const data = tempDir(name);
  const keyPrefix = uniquePrefix();
  let engine: EmbeddedEngine | undefined;
  let redis: Redis | undefined;
  const opened: CachedTimelineStore[] = [];
  beforeAll(async () => {
    engine = await openEmbeddedEngine({ dir: data.dir });
    redis = await connectRedis();
  });
  afterAll(async () => {
    for (const store of opened) store.close();
    if (redis) {
      await deleteKeys(redis, keyPrefix);
      redis.disconnect();
    }
    await engine?.close();
    data.remove();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('timelineCacheFixture used before beforeAll');
    return value;
  };
  const inner = (): TimelineStore => ready(engine).timeline;
  const client = (): Redis => ready(redis);
  return {
    keyPrefix,
    get inner() {
      return inner();
    },
    get redis() {
      return client();
    },
    cached: (options = {}, via) => {
      const store = new CachedTimelineStore(inner(), { redis: via ?? client(), keyPrefix, ...options });
      opened.push(store);
      return store;
    },
    fresh: () => inboxKey(uniqueTenant(), 'alice'),
    tlKey: (inbox) => `${keyPrefix}tl:0:{${inbox}}`,
    ddKey: (inbox) => `${keyPrefix}dk:0:{${inbox}}`,
  };
}

export const batch = (seqs: number[], tag = 'm'): Entry[] => seqs.map((seq) => msgEntry(seq, `${tag}${seq}`));
export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
