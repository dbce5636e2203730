/** The port shape the shared seq-log contract runs against, apart from the tests themselves. */
import type { DedupKey, Entry, StoredOutcome } from '@seqline/core';
import type { StoreOpener } from './harness.ts';

export interface SeqLogPort<K extends string> {
  headSeq(key: K): Promise<number>;
}

/** The port's readAfter or readBefore, called with the stream key and the seq bound (its input names them per port). */
export type ReadPage<K extends string, S> = (store: S, key: K, seq: number, limit: number) => Promise<Entry[]>;

/** The port's append, called with the stream key (its input names it `inbox` or `group`). */
export type AppendTo<K extends string, S> = (store: S, key: K, entries: Entry[]) => Promise<StoredOutcome[]>;

/** The port's findSeqs, called with the stream key (the ports name it `inbox` or `group`). */
export type FindSeqs<K extends string, S> = (store: S, key: K, keys: readonly DedupKey[]) => Promise<Map<DedupKey, number>>;

/** What the shared seq-log tests need of a port besides its store. */
export interface SeqLogSuite<K extends string, S extends SeqLogPort<K>> {
  open: StoreOpener<S>;
  makeKey: (tenant: string, id: string) => K;
  append: AppendTo<K, S>;
  find: FindSeqs<K, S>;
  readAfter: ReadPage<K, S>;
  readBefore: ReadPage<K, S>;
  /** Writes the previous version's layout; absent: the upgrade cases are not run. */
  previousLayout?: PreviousLayoutWriter<K> | undefined;
}

/**
 * Stores `entries` in stream `key` of the data `dataKey` names (as the suite's opener does) the
 * way the previous version did: each entry with a dedup row keyed by its plain appinfo. Called
 * while no store of that data is open; the suite opens one afterwards (the upgrade).
 */
export type PreviousLayoutWriter<K extends string> = (dataKey: string, key: K, entries: Entry[]) => Promise<void>;
