/**
 * The `convs` of a sync answer: the state of every conversation the returned entries
 * touch, each exact at or past the newest returned entry touching it, and of every read-fanout
 * group listed in `groups`, with its stream side.
 *
 * The index may trail the entries: on CQL the shard owner writes it right after them (and after
 * a failed index write, until the next append to the inbox catches it up), so a reader can see
 * an entry before its conversation's state. A state found older than its entry, or a
 * conversation not found, is not taken as it is: the index's watermark is polled until it
 * reaches the entry, within a bound, and the state read again — exact then, or absent for good.
 * What the bound leaves behind is named in `pending` instead of being sent older than the
 * entries or silently left out (docs/protocol.md, "`sync` and its `convs`").
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Conv, ConversationIndex, ConversationState, Entry, InboxKey } from '@seqline/core';
import type { Caller, GroupNews } from './api.ts';
import type { MessagingStores } from './deps.ts';
import { withStreamSides } from './group-conversations.ts';
import { conversationTouches, type ConversationTouch } from './visible-timeline.ts';

/** How long a sync waits at most for the index to reach its entries. */
export const DEFAULT_SYNC_CONVS_WAIT_MS = 500;
/** The first pause between two watermark reads; it doubles up to the last. */
const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 50;

export type SyncConvsDeps = { stores: MessagingStores; policy?: { syncConvsWaitMs?: number } };

export interface SyncConvs {
  convs: ConversationState[];
  /** Conversations touched by the entries whose state the index had not reached within the bound. */
  pending: Conv[];
}

export async function syncConvs(
  d: SyncConvsDeps,
  caller: Caller,
  inbox: InboxKey,
  entries: readonly Entry[],
  groups: readonly GroupNews[],
): Promise<SyncConvs> {
  const index = d.stores.conversations;
  const touches = [...(await conversationTouches(d, inbox, entries)).values()];
  const found = await Promise.all(touches.map((t) => index.getConversation({ inbox, conv: t.conv })));
  const states: ConversationState[] = [];
  const unsure: ConversationTouch[] = [];
  touches.forEach((touch, i) => {
    const state = found[i] ?? null;
    // At or past its entry: exact, whatever the watermark. Older, or none: lagging, or not
    // changed by that entry (a read of a conversation the inbox has nothing of) — the watermark tells.
    if (state !== null && state.asOfSeq >= touch.seq) states.push(state);
    else unsure.push(touch);
  });
  const pending: Conv[] = [];
  if (unsure.length > 0) {
    const watermark = await watermarkReaching(index, inbox, Math.max(...unsure.map((t) => t.seq)), d.policy?.syncConvsWaitMs);
    const reached = unsure.filter((t) => t.seq <= watermark);
    for (const t of unsure) if (t.seq > watermark) pending.push(t.conv);
    // Read after the watermark was: each is exact at it or later, so at or past its entry.
    const again = await Promise.all(reached.map((t) => index.getConversation({ inbox, conv: t.conv })));
    for (const state of again) if (state !== null) states.push(state);
  }
  // The groups with stream news are touched too: their conversation's stream side moved.
  const named = new Set(touches.filter((t) => t.conv.type === 'group').map((t) => t.conv.id));
  const news = await Promise.all(
    groups.filter((g) => !named.has(g.id)).map((g) => index.getConversation({ inbox, conv: { type: 'group', id: g.id } })),
  );
  for (const state of news) if (state !== null) states.push(state);
  const convs = (await withStreamSides(d, caller, states, 1)).map(({ state }) => state);
  return { convs, pending };
}

/**
 * The index's watermark once it is at least `seq`, or as it was when `boundMs` ran out: the
 * first read answers at once when the index is not behind, as it nearly always is.
 */
export async function watermarkReaching(
  index: Pick<ConversationIndex, 'headSeq'>,
  inbox: InboxKey,
  seq: number,
  boundMs = DEFAULT_SYNC_CONVS_WAIT_MS,
): Promise<number> {
  const deadline = performance.now() + boundMs;
  let pause = FIRST_POLL_MS;
  for (;;) {
    const watermark = await index.headSeq(inbox);
    const left = deadline - performance.now();
    if (watermark >= seq || left <= 0) return watermark;
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, MAX_POLL_MS);
  }
}
