/**
 * Ports of the single writers (libs/seq in process, libs/cluster over NATS), split from ports.ts,
 * which re-exports them: the only way entries enter an inbox or a read-fanout group stream.
 */
import type { AppendOutcome, NewEntry } from './entry.ts';
import type { GroupKey, InboxKey } from './ids.ts';
import type { ConversationRebuildReport } from './conversations/port.ts';
import type { DurableListener } from './timeline-ports.ts';

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
