/**
 * The writer of the conversation index on LMDB: an AppendHook of the inbox SeqLog. For an
 * append it first computes every entry's changes (core's indexEntrySync) against an overlay of
 * the changes computed so far over the stored rows, and only then writes — so a throw (an
 * entry the index refuses) fails the whole append with nothing written, entries included.
 * The overlay and its rows' layout: pending-index.ts.
 */
import {
  applyToConversations,
  conversationFactsNeeded,
  conversationKey,
  emptyFacts,
  emptyFactsRequest,
  InternalError,
  isActivity,
  LruMap,
  readsOnSend,
  splitKey,
  type ConversationChanges,
  type Entry,
  type IndexedConversations,
} from '@seqline/core';
import { assertStorableConvKey, type ConversationRows, type IndexSpace, type InboxLogDbs } from './conversation-dbs.ts';
import { fromJsonRow } from './json-rows.ts';
import { PendingIndex } from './pending-index.ts';
import { NOT_READY, type AppendHook, type NotReady } from './seq-log.ts';

export { unreadCursor } from './pending-index.ts';

/** More rounds than core's planner ever needs (two) means the overlay is not answering. */
const MAX_ROUNDS = 4;

/**
 * Core's indexEntrySync loop, with the one round an activity entry needs (its record, and the
 * unread items its owner's own message reads) answered before the first plan: one planning
 * pass fewer for nearly every entry. Core still says what is missing, so a wrong guess costs a
 * round, never a wrong count.
 */
function indexEntry(entry: Entry, self: string, pending: PendingIndex): ConversationChanges {
  const facts = emptyFacts();
  if (isActivity(entry)) {
    const convKey = conversationKey(entry.conv);
    const first = emptyFactsRequest();
    first.convKeys.push(convKey);
    if (readsOnSend(entry, self)) first.unreadUpTo.push({ convKey, upToSeq: entry.seq });
    pending.answer(first, facts);
  }
  for (let round = 0; ; round++) {
    const need = conversationFactsNeeded(entry, facts, self);
    if (need === null) return applyToConversations(entry, facts, self);
    if (round === MAX_ROUNDS) throw new InternalError(`conversation facts not answered for seq ${entry.seq}`);
    pending.answer(need, facts);
  }
}

/** Inboxes whose watermark the writer remembers (≈ 125 bytes each, measured, key included): about 12 MiB at most. */
export const MAX_REMEMBERED_WATERMARKS = 100_000;

/**
 * Core's fold of `entries` (in seq order, above the watermark of `rows`) over the index as
 * stored in `rows`, into `pending` (a new overlay when none): nothing is written yet. The one
 * fold of every index write — an append, a catch-up, a rebuild (conversation-chunks.ts).
 */
export function foldEntries(
  rows: ConversationRows,
  log: InboxLogDbs,
  inbox: string,
  entries: readonly Entry[],
  pending = new PendingIndex(inbox, rows, log),
): PendingIndex {
  const self = splitKey(inbox).id;
  for (const entry of entries) {
    pending.addEntry(entry);
    pending.apply(indexEntry(entry, self, pending));
  }
  return pending;
}

export type { PendingIndex };

/**
 * The index's catch-up out of the append path (conversation-chunks.ts): for an index more than
 * `chunk` entries behind its log, which one append's transaction must not fold.
 */
export interface ChunkedCatchUp {
  readonly chunk: number;
  /** Undefined: the inbox may be appended to now; else resolves once it may (append-hook `ready`). */
  ready(inbox: string, remembered: boolean): Promise<Error | undefined> | undefined;
}

/** The memo of an inbox's index: its watermark, as -1 - watermark when the index lives in space 1 (one number each). */
function memo(space: IndexSpace, watermark: number): number {
  return space === 0 ? watermark : -1 - watermark;
}

function memoSpace(value: number): IndexSpace {
  return value < 0 ? 1 : 0;
}

function memoWatermark(value: number): number {
  return value < 0 ? -1 - value : value;
}

export class LmdbConversationIndexWriter implements AppendHook<IndexedConversations> {
  /**
   * Watermarks this process wrote (with the space written, see memo()), so an append need not
   * read its inbox's rows. Trusted only when equal to the log head before the append: a commit
   * that failed leaves the head below it. Bounded like the CQL writer's memory (least recently
   * written inboxes go first): a forgotten inbox costs point reads of its live space and stored
   * watermark, inside the append's transaction.
   */
  private readonly written: LruMap<string, number>;

  /** Without `catchUp`, an index behind its log is caught up inside the next append's transaction, however far behind. */
  constructor(
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
    maxRemembered = MAX_REMEMBERED_WATERMARKS,
    private readonly catchUp?: ChunkedCatchUp,
  ) {
    this.written = new LruMap<string, number>(maxRemembered);
  }

  /** Inboxes whose watermark is remembered (at most the bound). */
  get rememberedWatermarks(): number {
    return this.written.size;
  }

  ready(inbox: string): Promise<Error | undefined> | undefined {
    return this.catchUp?.ready(inbox, this.written.get(inbox) !== undefined);
  }

  prepare(
    inbox: string,
    headBefore: number,
    written: readonly Entry[],
    derive: boolean,
  ): (() => IndexedConversations | undefined) | NotReady {
    for (const entry of written) assertStorableConvKey(conversationKey(entry.conv));
    const remembered = this.written.get(inbox);
    const rows = remembered === undefined ? this.rows.live(inbox) : this.rows.inSpace(memoSpace(remembered));
    const behind = this.behind(rows, inbox, headBefore, remembered);
    if (behind === NOT_READY) {
      this.written.delete(inbox); // so that `ready` looks at the stored index
      return NOT_READY;
    }
    const pending = foldEntries(rows, this.log, inbox, [...behind, ...written]);
    for (const key of pending.records.keys()) assertStorableConvKey(key);
    const indexed = derive ? pending.indexed() : undefined;
    return () => {
      pending.write();
      this.written.set(inbox, memo(rows.space, pending.watermark));
      return indexed;
    };
  }

  /** Forgets what this process knows of the inbox's index (its rows were replaced, or its space switched). */
  forget(inbox: string): void {
    this.written.delete(inbox);
  }

  /**
   * Entries the index is not exact at yet: none in normal operation (it is written with every
   * append); after its rows were dropped, the entries above its watermark, folded here when they
   * are at most a chunk (NOT_READY otherwise: the chunked catch-up folds them first).
   */
  private behind(rows: ConversationRows, inbox: string, headBefore: number, remembered: number | undefined): Entry[] | NotReady {
    if (remembered !== undefined && memoWatermark(remembered) === headBefore) return [];
    const watermark = rows.watermark(inbox);
    if (watermark >= headBefore) return [];
    if (this.catchUp !== undefined && headBefore - watermark > this.catchUp.chunk) return NOT_READY;
    const range = this.log.entries.getRange({
      start: [inbox, watermark],
      exclusiveStart: true,
      end: [inbox, headBefore],
      inclusiveEnd: true,
    });
    return Array.from(range, ({ value }) => fromJsonRow(value));
  }
}
