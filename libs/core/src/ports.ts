/**
 * Ports: the interfaces adapters implement (libs/store, libs/seq, libs/bus) for both the
 * embedded engine and the distributed services. Each port has one contract suite.
 */
import type { TenantHooks } from './hooks/types.ts';
import type { DedupKey } from './dedup-key.ts';
import type { AppendOutcome, Entry, NewEntry, StoredOutcome } from './entry.ts';
import type { GroupKey, InboxKey } from './ids.ts';
import type { TierThresholds } from './tiers.ts';
import type { Limits } from './config.ts';
import type { ConversationRebuildReport, IndexedConversations } from './conversations/port.ts';

// ---------------------------------------------------------------- timeline

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

// ---------------------------------------------------------------- groups

// Group membership and group streams: group-ports.ts (the package entry exports it).

// ---------------------------------------------------------------- seq ceilings

/** A scope's epoch record as it stood just before an epoch was drawn (the handover record). */
export interface EpochRecord {
  /** The last epoch drawn. */
  epoch: number;
  /** The last clean release recorded (recordRelease): which epoch, at what wall-clock ms. */
  released?: { epoch: number; atMs: number };
}

export interface DrawnEpoch {
  epoch: number;
  /** The scope's record before this draw; undefined when no epoch was ever drawn for it. */
  before: EpochRecord | undefined;
}

/**
 * Persisted section ceilings (WeChat seqsvr): no seq above a section's ceiling is handed out
 * before the ceiling is durable. Writes carry the owner's epoch; a stale epoch is fenced.
 */
export interface SeqCeilingStore {
  /** A new, never-before-returned epoch for `scope` (persisted counter). */
  nextEpoch(scope: string): Promise<number>;
  /**
   * `nextEpoch`, also returning the scope's record as it stood just before this draw, in the
   * same atomic step: whether the previous holder released cleanly (core's handoverWait reads it).
   */
  drawEpoch(input: { scope: string }): Promise<DrawnEpoch>;
  /**
   * Records that the holder of `epoch` has stopped writing for good (everything it wrote has
   * settled), at `atMs` on its wall clock. Applied only while `epoch` is still the scope's last
   * drawn epoch, atomically with that check; false when a later epoch exists (the record would
   * then vouch for nothing: that later holder may be writing).
   */
  recordRelease(input: { scope: string; epoch: number; atMs: number }): Promise<boolean>;
  /**
   * Takes ownership of a section for `epoch` (must be >= the stored epoch, else FencedError)
   * and returns its persisted ceiling (0 when new).
   */
  claim(input: CeilingClaim): Promise<number>;
  /** Persists a higher ceiling; FencedError if another owner claimed with a higher epoch. */
  raise(input: CeilingRaise): Promise<void>;
}

/** SeqCeilingStore.claim: the section an owner takes, under its epoch. */
export interface CeilingClaim {
  section: string;
  epoch: number;
}

/** SeqCeilingStore.raise: the section's new ceiling, written under the owner's epoch. */
export interface CeilingRaise {
  section: string;
  ceiling: number;
  epoch: number;
}

// ---------------------------------------------------------------- jobs, work queue, push bus

// Declared in bus-ports.ts to keep this file short; exported from here.
export type * from './bus-ports.ts';

// ---------------------------------------------------------------- single-writer inbox

/**
 * One append through an inbox's single writer (InboxWriter.append), which allocates the seqs.
 * A writer that passes the call on forwards the whole input (`owner.append(input)`), so a field
 * it does not know still reaches the writer it wraps.
 */
export interface InboxAppend {
  inbox: InboxKey;
  /** New entries; the writer allocates their seqs, in this order. */
  entries: NewEntry[];
}

/** An append at the inbox's owner itself, which may tell when the entries are durable. */
export interface OwnerAppend extends InboxAppend {
  /** Told as in TimelineAppend.durable, for an append that runs alone. */
  durable?: DurableListener;
}

/** The second append of InboxWriter.appendThen. */
export interface FollowUpAppend extends InboxAppend {
  /** How long the first append's caller waits for this one before giving up on it. */
  timeoutMs: number;
}

/** InboxWriter.appendThen: an append, then `next` when every one of its entries was new. */
export interface InboxAppendThen extends InboxAppend {
  next: FollowUpAppend;
}

/** InboxWriter.addReceipt: readers of the inbox owner's own message `appinfo`. */
export interface InboxReceipt {
  inbox: InboxKey;
  appinfo: string;
  readers: string[];
}

/**
 * What became of a follow-up append: `appended` (it resolved in time); `skipped` (an entry of
 * the first append was a duplicate, so the caller decides what to deliver); `failed` (it threw
 * or timed out; being idempotent by dedup key, it may still land later without harm).
 */
export type FollowUpResult = 'appended' | 'skipped' | 'failed';

export interface ChainedAppend {
  /** The first append's outcomes. */
  outcomes: AppendOutcome[];
  next: FollowUpResult;
}

/**
 * The only way entries enter an inbox. Calls for one inbox are serialized by its owner
 * (in-process in embedded mode, the shard owner over NATS in distributed mode), which
 * allocates seqs and publishes a push after the append is durable.
 */
export interface InboxWriter {
  /**
   * Outcomes align with `entries`. A duplicate's carries the `original` as stored when the
   * store's append found it (its dedup read it anyway), or when it repeats an entry earlier in
   * the call. An owner that answers a recent resend from memory remembers only its seq (a
   * bounded count of keys), so it leaves `original` out: a caller that needs it (a send's
   * resend) reads it by seq then; one that does not (a fanout retry) reads nothing.
   */
  append(input: InboxAppend): Promise<AppendOutcome[]>;
  /**
   * `append({ inbox, entries })`, then — only when every one of those entries was new — appends
   * `next.entries` to `next.inbox`, waiting at most `next.timeoutMs` for it. Throws only when
   * the first append fails. A remote writer sends both in one request: the first inbox's owner
   * runs the second append itself, so a 1:1 send costs the sender's gateway one round trip.
   */
  appendThen(input: InboxAppendThen): Promise<ChainedAppend>;
  /**
   * Merges `readers` into the receipt state of the inbox owner's own message `appinfo` (the
   * receipt goes to its sender, whose inbox this is) and, when
   * the set grew, appends one `receipt` entry carrying all readers. Concurrent calls for one
   * inbox are serialized and merged (no lost update). No-op if the message is not there.
   */
  addReceipt(input: InboxReceipt): Promise<void>;
  /** Current head seq of the inbox as the writer knows it. */
  headSeq(inbox: InboxKey): Promise<number>;
  /**
   * Rebuilds the inbox's conversation index from its entries (`seqline-admin conversations
   * rebuild`), queued behind the inbox's appends like one of them and fenced like them, and
   * says whether what was stored differed.
   */
  rebuildConversations(inbox: InboxKey): Promise<ConversationRebuildReport>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- single-writer group streams

/** One append to a group stream through its single writer (GroupStreamAppender.append). */
export interface GroupAppend {
  group: GroupKey;
  /** New entries; the writer allocates their gseqs, in this order. */
  entries: NewEntry[];
}

/** What became of one entry of a group stream append. */
export interface GroupAppendOutcome extends AppendOutcome {
  /**
   * Set exactly when this call stored the entry: the gseq stored just before it in the stream
   * (0 for the first), what a `group.push` carries as `prevGseq`. Absent for duplicates.
   */
  prevSeq?: number;
}

/**
 * The only way entries enter a read-fanout group stream: the group's single writer, which
 * allocates gseqs (GroupStreamWriter in process, or the owner of the group's shard over NATS).
 * Every implementation promises, per group (groups are independent):
 * - idempotent by dedup key (as TimelineStore.append): an entry whose key is already in the
 *   stream — stored by an
 *   earlier call, a concurrent one, an earlier writer, or earlier in the same call — is not
 *   stored again; its outcome is the original gseq with `duplicate: true` (within the store's
 *   dedup horizon, see TimelineStore.append);
 * - outcomes align with `entries`; the new ones are durable when the call resolves. A call that
 *   rejects may have stored some of its entries; retrying it whole is safe (they dedup);
 * - gseqs strictly increase in store order and are never reused, across restarts and owner
 *   changes (a new writer continues above everything stored). They may have gaps (a new
 *   writer starts above its section's persisted ceiling; a failed append burns its gseqs);
 * - no hole for readers: each new entry's `prevSeq` is the gseq stored right before it, so the
 *   new outcomes of all calls chain into exactly the stream a reader reads back.
 */
export interface GroupStreamAppender {
  append(input: GroupAppend): Promise<GroupAppendOutcome[]>;
  /**
   * The stream head (highest stored gseq, 0 when empty) once every append queued at the writer
   * before this call is done: at least each gseq those appends got. For one caller, that is
   * every append it started earlier on the same appender (a remote appender orders by arrival
   * at the owner: an append split into several requests, or retried, may land later). A
   * membership change records it as a window bound between messages.
   */
  headSeq(group: GroupKey): Promise<number>;
}

// ---------------------------------------------------------------- operator settings

/** What an operator changes live (admin CLI): tier thresholds and work limits. */
export interface Settings {
  tiers: TierThresholds;
  limits: Limits;
  /** Per-tenant hook settings (overrides of the process defaults), by tenant id. */
  hooks: Record<string, TenantHooks>;
  /** Bumped on every save; watchers compare it to notice a change cheaply. */
  version: number;
}

export interface SettingsStore {
  /** The stored settings, or null when none were ever saved (defaults apply). */
  load(): Promise<Settings | null>;
  /**
   * Saves if the stored version still equals `expectedVersion` (0 = none stored yet) and
   * returns the saved settings with version = expectedVersion + 1; false when someone else
   * saved in between (the caller reloads and retries).
   */
  save(input: SettingsSave): Promise<Settings | false>;
}

/** SettingsStore.save: the new settings, and the version the caller read them against. */
export interface SettingsSave {
  settings: Omit<Settings, 'version'>;
  expectedVersion: number;
}

// ---------------------------------------------------------------- conversation index

// Declared beside its rules (conversations/port.ts) to keep this file short; exported from here.
export type {
  ConversationCatchUp,
  ConversationEntriesPage,
  ConversationIndex,
  ConversationListPage,
  ConversationRebuilder,
  ConversationRebuildReport,
  ConversationRef,
  ConversationListQuery,
  ConversationStreamSides,
  IndexedConversations,
  IndexedState,
  InboxEntries,
} from './conversations/port.ts';
