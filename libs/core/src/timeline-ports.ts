/**
 * Ports of inbox timelines (libs/store), split from ports.ts, which re-exports them: what one
 * append carries and who it tells, and the reading and writing halves of a timeline.
 */
import type { DedupKey } from './dedup-key.ts';
import type { AppendOutcome, Entry, StoredOutcome } from './entry.ts';
import type { InboxKey } from './ids.ts';
import type { IndexedConversations } from './conversations/port.ts';

/**
 * Called synchronously right before each write round trip of an append; throws to abort it.
 * A shard owner passes its lease check: a store whose append takes several round trips (CQL)
 * must not let a writer that was paused mid-append — and deposed meanwhile — finish it.
 */
export interface WriteGuard {
  (): void;
  /**
   * The writer's term (a shard lease and its epoch). A store may keep what it learnt of a
   * stream (its head, its appinfos) between appends only while the term stays the same: a
   * different term means another writer may have appended meanwhile. No term: the caller is
   * the stream's only writer for the store's lifetime.
   */
  readonly term?: string;
}

/** Told an append's outcomes once its entries are durable, maybe before the append resolves. */
export type DurableListener = (outcomes: AppendOutcome[]) => void;

/** Told what an append's conversation index write left the conversations it touched. */
export type IndexedListener = (indexed: IndexedConversations) => void;

/** Told that an append's entries are durable but its conversation index write failed. */
export type IndexBehindListener = () => void;

/**
 * One append to an inbox (TimelineWriter.append). A decorator forwards the whole input with
 * what it changes spread over it (`{ ...input, guard }`), so a field it does not know still
 * reaches the store it wraps. Each listener is told at most once, before the append resolves.
 */
export interface TimelineAppend {
  inbox: InboxKey;
  /** Seqs already allocated by the inbox's single writer, ascending. */
  entries: Entry[];
  /** Runs before every write round trip the append makes (see WriteGuard). */
  guard?: WriteGuard;
  /**
   * The outcomes, as soon as the entries are durable: a store that has more to do after that
   * (its conversation index, a cache write) may tell it first. A caller must not count on it.
   */
  durable?: DurableListener;
  /**
   * The states of the conversations the append's entries touched, as the store's index writer
   * computed them while writing them (not read back): told once that write succeeded. Not told
   * by a store without a conversation index, nor when the index write failed (it then trails
   * the entries until the next append catches it up).
   */
  indexed?: IndexedListener;
  /**
   * Told when the store's conversation index write for these entries failed: the entries are
   * durable and the index trails them until a catch-up (ConversationCatchUp) or the inbox's next
   * append indexes them. Not told by a store that writes its index with the entries.
   */
  indexBehind?: IndexBehindListener;
}

/** One entry of an inbox, by seq (TimelineReader.getEntry). */
export interface InboxEntryRef {
  inbox: InboxKey;
  seq: number;
}

/** Readers to merge into the receipt state of entry `seq` (TimelineWriter.addReaders). */
export interface EntryReaders {
  inbox: InboxKey;
  seq: number;
  readers: string[];
}

/** A page of an inbox after a seq (TimelineReader.readAfter). */
export interface InboxPageAfter {
  inbox: InboxKey;
  afterSeq: number;
  limit: number;
}

/** A page of an inbox before a seq (TimelineReader.readBefore). */
export interface InboxPageBefore {
  inbox: InboxKey;
  beforeSeq: number;
  limit: number;
}

/** The reading half of an inbox timeline: a write decorator (a fence) leaves it alone. */
export interface TimelineReader {
  /**
   * key → seq for those of `keys` stored in this inbox. Keys come from core's rule (messageKey,
   * dedupKeyOf, serverEntryKey): a message is named by its sender and appinfo.
   */
  findSeqs(input: { inbox: InboxKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>>;
  getEntry(input: InboxEntryRef): Promise<Entry | null>;
  /** Entries with seq > afterSeq, ascending, at most limit. */
  readAfter(input: InboxPageAfter): Promise<Entry[]>;
  /** Entries with seq < beforeSeq, descending, at most limit. */
  readBefore(input: InboxPageBefore): Promise<Entry[]>;
  /** Highest stored seq, 0 for an empty inbox. */
  headSeq(inbox: InboxKey): Promise<number>;
  /** The readers in the receipt state of entry `seq`, sorted (empty when none). */
  getReaders(input: InboxEntryRef): Promise<string[]>;
}

/** The writing half of an inbox timeline: what a write decorator (a fence, a cache) wraps. */
export interface TimelineWriter {
  /**
   * Appends entries whose seqs were already allocated by the inbox's single writer, in seq
   * order, and keeps the inbox's conversation index (a store that has one writes it with them:
   * LMDB in the same transaction, CQL right after; `indexed` hears what it wrote). Idempotent
   * by dedup key (core's dedupKeyOf: sender and appinfo for a message, the appinfo for a server
   * entry): an entry whose key is already in this inbox is not written; its outcome is
   * `duplicate: true` with the original seq and the `original` entry as stored (also when the
   * same key appears twice in one call; a CQL store dedups against the inbox's newest buckets
   * until they hold its last 32 768 entries, up to 16 buckets — docs/decisions.md). Entries and the appinfo index are
   * written atomically; durable when the promise resolves. A seq not above the inbox head is a
   * bug: it throws.
   */
  append(input: TimelineAppend): Promise<StoredOutcome[]>;
  /** Adds readers to the receipt state of entry `seq`; returns all readers, sorted. */
  addReaders(input: EntryReaders): Promise<string[]>;
}

/**
 * An inbox timeline: the entries of each inbox by seq, their dedup index, their receipt state
 * and (where the store keeps one) the conversation index beside them.
 */
export interface TimelineStore extends TimelineReader, TimelineWriter {}
