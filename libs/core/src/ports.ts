/**
 * Ports: the interfaces adapters implement (libs/store, libs/seq, libs/bus) for both the
 * embedded engine and the distributed services. Each port has one contract suite.
 */
import type { TenantHooks } from './hooks/types.ts';
import type { AppendOutcome, Entry, NewEntry } from './entry.ts';
import type { GroupKey, InboxKey } from './ids.ts';
import type { Tier, TierThresholds } from './tiers.ts';
import type { Limits } from './config.ts';
import type { ConversationRebuildReport } from './conversations/port.ts';

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

export interface TimelineStore {
  /**
   * Appends entries whose seqs were already allocated by the inbox's single writer, in seq
   * order. Idempotent by appinfo: an entry whose appinfo is already in this inbox is not
   * written and its original seq is returned with `duplicate: true` (also when the same
   * appinfo appears twice in one call; a CQL store dedups against the inbox's last two non-empty
   * buckets, ≥ 65 536 seqs — docs/decisions.md). Entries and the appinfo index are written atomically;
   * durable when the promise resolves. A seq not above the inbox head is a bug: it throws.
   * `guard` runs before every write the append makes (see WriteGuard). A store that has more
   * to do after the entries are durable (a cache write) may call `durable` once, with the
   * outcomes, as soon as they are; a caller must not count on it being called at all.
   */
  append(inbox: InboxKey, entries: Entry[], guard?: WriteGuard, durable?: DurableListener): Promise<AppendOutcome[]>;
  /** appinfo → seq for those of the given appinfos stored in this inbox. */
  findSeqs(inbox: InboxKey, appinfos: string[]): Promise<Map<string, number>>;
  getEntry(inbox: InboxKey, seq: number): Promise<Entry | null>;
  /** Entries with seq > afterSeq, ascending, at most limit. */
  readAfter(inbox: InboxKey, afterSeq: number, limit: number): Promise<Entry[]>;
  /** Entries with seq < beforeSeq, descending, at most limit. */
  readBefore(inbox: InboxKey, beforeSeq: number, limit: number): Promise<Entry[]>;
  /** Highest stored seq, 0 for an empty inbox. */
  headSeq(inbox: InboxKey): Promise<number>;
  /** Adds readers to the receipt state of entry `seq`; returns all readers, sorted. */
  addReaders(inbox: InboxKey, seq: number, readers: string[]): Promise<string[]>;
  getReaders(inbox: InboxKey, seq: number): Promise<string[]>;
}

// ---------------------------------------------------------------- groups

export interface GroupRecord {
  key: GroupKey;
  tenant: string;
  id: string;
  name: string;
  /** The creator; may recall others' messages. */
  admin: string;
  tier: Tier;
  memberCount: number;
  createdAt: number;
}

/** One stretch of membership. gseqs bound what a read-fanout member may read. */
export interface MemberWindow {
  joinedAt: number;
  /** Group stream head when the member joined: sees gseq > fromGseq. */
  fromGseq: number;
  removedAt?: number;
  /** Group stream head when removed: sees gseq <= toGseq. */
  toGseq?: number;
}

export interface Membership {
  user: string;
  windows: MemberWindow[];
}

export interface MembershipChangeAt {
  time: number;
  gseq: number;
}

export interface GroupStore {
  /** Creates the group with its initial members; false when the key already exists. */
  createGroup(group: GroupRecord, members: string[], at: MembershipChangeAt): Promise<boolean>;
  getGroup(key: GroupKey): Promise<GroupRecord | null>;
  updateGroup(key: GroupKey, patch: Partial<Pick<GroupRecord, 'name' | 'tier' | 'memberCount'>>): Promise<void>;
  /** Opens a window for each user not currently a member; returns the users actually added. */
  addMembers(key: GroupKey, users: string[], at: MembershipChangeAt): Promise<string[]>;
  /** Closes the open window of each current member; returns the users actually removed. */
  removeMembers(key: GroupKey, users: string[], at: MembershipChangeAt): Promise<string[]>;
  getMembership(key: GroupKey, user: string): Promise<Membership | null>;
  /** Current members (open window), sorted. */
  listMembers(key: GroupKey): Promise<string[]>;
  /**
   * Current members (open window) with all their windows, sorted by user: what a push to every
   * member needs in one read instead of one per member.
   */
  listMemberships(key: GroupKey): Promise<Membership[]>;
  /** Groups this user has ever been a member of (any window), as group keys. */
  groupsOf(inbox: InboxKey): Promise<GroupKey[]>;
}

/** Read-fanout group streams: one copy per message, numbered by gseq. */
export interface GroupStreamStore {
  /** Same contract as TimelineStore.append, on (group, gseq). */
  append(group: GroupKey, entries: Entry[], guard?: WriteGuard): Promise<AppendOutcome[]>;
  findSeqs(group: GroupKey, appinfos: string[]): Promise<Map<string, number>>;
  readAfter(group: GroupKey, afterGseq: number, limit: number): Promise<Entry[]>;
  readBefore(group: GroupKey, beforeGseq: number, limit: number): Promise<Entry[]>;
  headSeq(group: GroupKey): Promise<number>;
  /** Per-user read cursor in a group stream; only moves forward. Returns the stored cursor. */
  setCursor(group: GroupKey, inbox: InboxKey, gseq: number): Promise<number>;
  getCursor(group: GroupKey, inbox: InboxKey): Promise<number>;
  /** Every cursor set in the group, by inbox (who has read how far: one read for a read count). */
  listCursors(group: GroupKey): Promise<Map<InboxKey, number>>;
}

// ---------------------------------------------------------------- seq ceilings

/**
 * Persisted section ceilings (WeChat seqsvr): no seq above a section's ceiling is handed out
 * before the ceiling is durable. Writes carry the owner's epoch; a stale epoch is fenced.
 */
export interface SeqCeilingStore {
  /** A new, never-before-returned epoch for `scope` (persisted counter). */
  nextEpoch(scope: string): Promise<number>;
  /**
   * Takes ownership of a section for `epoch` (must be >= the stored epoch, else FencedError)
   * and returns its persisted ceiling (0 when new).
   */
  claim(section: string, epoch: number): Promise<number>;
  /** Persists a higher ceiling; FencedError if another owner claimed with a higher epoch. */
  raise(section: string, ceiling: number, epoch: number): Promise<void>;
}

// ---------------------------------------------------------------- jobs, work queue, push bus

// Declared in bus-ports.ts to keep this file short; exported from here.
export type * from './bus-ports.ts';

// ---------------------------------------------------------------- single-writer inbox

/** The second append of InboxWriter.appendThen. */
export interface FollowUpAppend {
  inbox: InboxKey;
  entries: NewEntry[];
  /** How long the first append's caller waits for this one before giving up on it. */
  timeoutMs: number;
}

/**
 * What became of a follow-up append: `appended` (it resolved in time); `skipped` (an entry of
 * the first append was a duplicate, so the caller decides what to deliver); `failed` (it threw
 * or timed out; being idempotent by appinfo, it may still land later without harm).
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
  append(inbox: InboxKey, entries: NewEntry[]): Promise<AppendOutcome[]>;
  /**
   * `append(inbox, entries)`, then — only when every one of those entries was new — appends
   * `next.entries` to `next.inbox`, waiting at most `next.timeoutMs` for it. Throws only when
   * the first append fails. A remote writer sends both in one request: the first inbox's owner
   * runs the second append itself, so a 1:1 send costs the sender's gateway one round trip.
   */
  appendThen(inbox: InboxKey, entries: NewEntry[], next: FollowUpAppend): Promise<ChainedAppend>;
  /**
   * Merges `readers` into the receipt state of the message `appinfo` in this inbox and, when
   * the set grew, appends one `receipt` entry carrying all readers. Concurrent calls for one
   * inbox are serialized and merged (no lost update). No-op if the message is not there.
   */
  addReceipt(inbox: InboxKey, appinfo: string, readers: string[]): Promise<void>;
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
 * - idempotent by appinfo: an entry whose appinfo is already in the stream — stored by an
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
  append(group: GroupKey, entries: NewEntry[]): Promise<GroupAppendOutcome[]>;
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
  /** v1.1: per-tenant hook settings (overrides of the process defaults), by tenant id. */
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
  save(settings: Omit<Settings, 'version'>, expectedVersion: number): Promise<Settings | false>;
}

// ---------------------------------------------------------------- conversation index (v1.1)

// Declared beside its rules (conversations/port.ts) to keep this file short; exported from here.
export type { ConversationIndex, ConversationListPage, ConversationRebuilder, ConversationRebuildReport } from './conversations/port.ts';
