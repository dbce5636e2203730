/**
 * The writing half of an inbox owner's append (InboxOwner.write): seqs taken from the section
 * allocator, entries appended durably (the store dedups), then the push, with the conversation
 * states the store's index writer computed in the same append. Outcomes align with the
 * entries. On a failed append the allocated seqs are burnt and the head is re-read from
 * the store next time; the append may have landed after all (e.g. a timeout), so its entries are
 * kept until then (unsettled-appends.ts).
 */
import {
  dedupKeyOf,
  type AppendOutcome,
  type DedupKey,
  type DurableListener,
  type Entry,
  type InboxKey,
  type IndexedConversations,
  type Logger,
  type NewEntry,
  type StoredOutcome,
  type TimelineStore,
} from '@seqline/core';
import { dedupAgainst, resolveInBatchDuplicates } from './dedup.ts';
import type { InboxState } from './inbox-queue.ts';
import type { PushPublisher } from './push-publisher.ts';
import type { RecentAppinfos } from './recent-appinfos.ts';
import type { SectionAllocator } from './section-allocator.ts';
import type { UnsettledAppends } from './unsettled-appends.ts';
import { tellEarlierTermOriginals } from './earlier-term-originals.ts';

/** What an owner's appends share. */
export interface AppendContext {
  timeline: TimelineStore;
  recent: RecentAppinfos;
  pushes: PushPublisher;
  /** The owner's append listener, wrapped so it cannot throw (InboxOwnerOptions.onAppended). */
  appended?: (inbox: InboxKey, entries: Entry[]) => void;
  /** Told when an append's index write failed (TimelineAppend.indexBehind): the owner catches the inbox up. */
  indexBehind?: (inbox: InboxKey) => void;
  /** Keeps the entries of a failed append, which may have landed, until the head is read again. */
  unsettled: UnsettledAppends;
  logger: Logger;
}

/** The append's `indexBehind` listener, when the owner catches up. */
function behindListener(ctx: AppendContext, inbox: InboxKey): { indexBehind?: () => void } {
  const told = ctx.indexBehind;
  return told === undefined ? {} : { indexBehind: () => told(inbox) };
}

/** The append is durable whatever the listener does: its failure is only logged. */
export function neverThrowing(listener: (inbox: InboxKey, entries: Entry[]) => void, logger: Logger): AppendContext['appended'] {
  return (inbox, entries) => {
    try {
      listener(inbox, entries);
    } catch (err) {
      logger.warn({ inbox, err }, 'append listener threw');
    }
  };
}

/** The usual append, one entry: writeMany's steps without its per-entry arrays and maps. */
export async function writeOne(
  ctx: AppendContext,
  state: InboxState,
  alloc: SectionAllocator,
  entry: NewEntry,
  durable?: DurableListener,
): Promise<AppendOutcome[]> {
  const headBefore = state.head as number;
  const key = dedupKeyOf(entry);
  const known = ctx.recent.lookupOne(state.inbox, key);
  if (known !== undefined) return [{ seq: known, duplicate: true }];
  const seq = alloc.tryTakeSync(state.inbox, 1) ?? (await alloc.next(state.inbox, 1))[0]!;
  const toStore: Entry = { ...entry, seq };
  let result: StoredOutcome | undefined;
  let indexed: IndexedConversations | undefined;
  try {
    [result] = await ctx.timeline.append({
      inbox: state.inbox,
      entries: [toStore],
      durable,
      indexed: (i) => (indexed = i),
      ...behindListener(ctx, state.inbox),
    });
    if (result === undefined) throw new Error('store returned no outcome for 1 entry');
  } catch (err) {
    ctx.unsettled.note(state, headBefore, [toStore]);
    state.head = undefined;
    throw err;
  }
  ctx.recent.remember(state.inbox, key, result.seq);
  ctx.unsettled.tell(ctx, state);
  if (!result.duplicate) {
    state.head = Math.max(headBefore, seq);
    ctx.pushes.publish(state.inbox, headBefore, [toStore], indexed);
    ctx.appended?.(state.inbox, [toStore]);
  } else if (result.seq <= alloc.claimedCeiling) {
    await tellEarlierTermOriginals(ctx, state.inbox, [result.seq]);
  }
  return [result];
}

export async function writeMany(
  ctx: AppendContext,
  state: InboxState,
  alloc: SectionAllocator,
  entries: NewEntry[],
): Promise<AppendOutcome[]> {
  const headBefore = state.head as number;
  // A recent resend is answered from memory (its seq, not its original); any other is deduped
  // inside the store's append (the same read as its head, which also answers with the original)
  // — it burns the seqs allocated for it: a gap, not a read per append.
  const keys = entries.map(dedupKeyOf);
  const { outcomes, fresh } = dedupAgainst(entries, keys, ctx.recent.lookup(state.inbox, keys));
  if (fresh.length === 0) return resolveInBatchDuplicates(outcomes, entries);

  // Seqs under the durable ceiling are taken without a hop; a raise is awaited only when due.
  const first = alloc.tryTakeSync(state.inbox, fresh.length) ?? (await alloc.next(state.inbox, fresh.length))[0]!;
  const toStore: Entry[] = fresh.map((f, k) => ({ ...f.entry, seq: first + k }));
  let results: StoredOutcome[];
  let indexed: IndexedConversations | undefined;
  try {
    results = await ctx.timeline.append({
      inbox: state.inbox,
      entries: toStore,
      indexed: (i) => (indexed = i),
      ...behindListener(ctx, state.inbox),
    });
    if (results.length !== toStore.length) throw new Error(`store returned ${results.length} outcomes for ${toStore.length} entries`);
  } catch (err) {
    ctx.unsettled.note(state, headBefore, toStore);
    state.head = undefined;
    throw err;
  }
  ctx.unsettled.tell(ctx, state);
  const stored: Entry[] = [];
  const earlierTerm: number[] = [];
  results.forEach((r, k) => {
    outcomes[(fresh[k] as { index: number }).index] = r;
    ctx.recent.remember(state.inbox, keys[(fresh[k] as { index: number }).index] as DedupKey, r.seq);
    if (!r.duplicate) stored.push(toStore[k] as Entry);
    else if (r.seq <= alloc.claimedCeiling) earlierTerm.push(r.seq);
  });
  const last = stored[stored.length - 1];
  if (last) {
    state.head = Math.max(headBefore, last.seq);
    ctx.pushes.publish(state.inbox, headBefore, stored, indexed);
    ctx.appended?.(state.inbox, stored);
  }
  if (earlierTerm.length > 0) await tellEarlierTermOriginals(ctx, state.inbox, earlierTerm);
  return resolveInBatchDuplicates(outcomes, entries);
}
