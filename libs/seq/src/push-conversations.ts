/**
 * The conversation states a push carries (`push {convs}`), worked out by the inbox's owner
 * once per append, never per socket, from what the store's index writer computed in that same
 * append (TimelineAppend.indexed): the states it wrote, exact at its watermark, which covers
 * the pushed entries. Usually nothing is read. A bounded read fills in only what the writer did
 * not hold: a `last` it never looked at (a read or clear leaves it an older message), a
 * conversation an entry names whose record that entry did not change, a read-fanout group's
 * stream side (ConversationStreamSides) — and everything when the store did not tell (its index
 * write failed, or it keeps none), as the index has it then.
 *
 * All or nothing: `convs` goes out only when every state is exact at or past the pushed entries,
 * so a client can take them as they come; otherwise the push goes without them and the client
 * asks sync. Reads are bounded: a slow or failed one never holds a push back longer than `waitMs`.
 */
import { conversationKey, conversationTouch, isActivity } from '@seqline/core';
import type {
  Conv,
  ConversationIndex,
  ConversationState,
  ConversationStreamSides,
  Entry,
  InboxKey,
  IndexedConversations,
  IndexedState,
  Logger,
  TimelineStore,
} from '@seqline/core';

export const DEFAULT_PUSH_CONVS_WAIT_MS = 50;
/** Most entries a push's deletes and reads by seqs may name outside it before the push goes without convs. */
export const MAX_TARGET_LOOKUPS = 32;

/** A conversation the pushed entries touch, and the newest pushed entry touching it. */
interface Touch {
  conv: Conv;
  seq: number;
}

/** Why a push goes without `convs` (logged at debug). */
class NoConvs {
  constructor(readonly reason: string) {}
}

/** A push's states: at hand now, or after a bounded read. */
export type PushStates = { now: ConversationState[] | undefined } | { later: Promise<ConversationState[] | undefined> };

export class PushConversations {
  constructor(
    private readonly index: ConversationIndex,
    private readonly timeline: Pick<TimelineStore, 'getEntry'>,
    private readonly streamSides: ConversationStreamSides | undefined,
    private readonly waitMs: number,
    private readonly logger: Logger,
  ) {}

  /** The states of the conversations `entries` touch, or undefined (none touched, lagging, slow, failed). */
  states(inbox: InboxKey, entries: readonly Entry[], indexed: IndexedConversations | undefined): PushStates {
    const last = entries.at(-1);
    if (last === undefined) return { now: undefined };
    if (indexed === undefined || indexed.watermark < last.seq)
      return { later: this.bounded(inbox, last.seq, this.readAll(inbox, entries, last.seq)) };
    const complete: ConversationState[] = [];
    const lastless: IndexedState[] = [];
    for (const state of indexed.states) {
      if (state.last === undefined) lastless.push(state);
      else complete.push({ ...state, last: state.last });
    }
    const computed = new Set(indexed.states.map((s) => conversationKey(s.conv)));
    // An entry naming its conversation without changing its record (a read or clear of one the
    // inbox has nothing of: absent, as the read will say). Deletes and reads by seqs change every
    // record they touch, so the writer's states hold them all.
    const unchanged = new Map<string, Touch>();
    for (const e of entries) {
      const touched = conversationTouch(e);
      if (touched !== null && 'conv' in touched && !computed.has(conversationKey(touched.conv))) {
        unchanged.set(conversationKey(touched.conv), { conv: touched.conv, seq: e.seq });
      }
    }
    const streams = this.streamSides !== undefined && indexed.states.some((s) => s.conv.type === 'group');
    if (lastless.length === 0 && unchanged.size === 0 && !streams) return { now: complete.length === 0 ? undefined : complete };
    return { later: this.bounded(inbox, last.seq, this.fillIn(inbox, last.seq, complete, lastless, [...unchanged.values()])) };
  }

  /** Races `work` against `waitMs`; what does not make it is logged at debug. */
  private async bounded(inbox: InboxKey, lastSeq: number, work: Promise<ConversationState[] | NoConvs | undefined>) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<NoConvs>((resolve) => {
      timer = setTimeout(() => resolve(new NoConvs(`index read slower than ${this.waitMs} ms`)), this.waitMs);
    });
    try {
      const found = await Promise.race([work.catch((err: unknown) => new NoConvs(`index read failed: ${String(err)}`)), timeout]);
      if (!(found instanceof NoConvs)) return found;
      this.logger.debug({ inbox, lastSeq, reason: found.reason }, 'push without convs');
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The writer's states, with what it did not hold read from the index. */
  private async fillIn(
    inbox: InboxKey,
    lastSeq: number,
    complete: ConversationState[],
    lastless: readonly IndexedState[],
    unchanged: readonly Touch[],
  ): Promise<ConversationState[] | NoConvs | undefined> {
    const out = [...complete];
    const [watermark, read, named] = await Promise.all([
      unchanged.length > 0 ? this.index.headSeq(inbox) : lastSeq,
      Promise.all(lastless.map((s) => this.index.getConversation({ inbox, conv: s.conv }))),
      Promise.all(unchanged.map((t) => this.index.getConversation({ inbox, conv: t.conv }))),
    ]);
    for (const [i, state] of read.entries()) {
      const known = lastless[i] as IndexedState;
      // The index holds at least what its writer wrote; a state older than that is not the index's now.
      if (state === null || state.asOfSeq < known.asOfSeq) return new NoConvs(`${conversationKey(known.conv)} read behind its write`);
      out.push(state);
    }
    // A state the entry did not change is exact at the watermark, which the entry's write passed.
    if (watermark < lastSeq) return new NoConvs(`index at ${watermark}, push up to ${lastSeq}`);
    for (const state of named) if (state !== null) out.push(state);
    if (out.length === 0) return undefined;
    return this.streamSides === undefined ? out : this.streamSides.withStreamSides({ inbox, states: out });
  }

  /** Without the writer's states: the touched conversations and the watermark, read in one round. */
  private async readAll(inbox: InboxKey, entries: readonly Entry[], lastSeq: number): Promise<ConversationState[] | NoConvs | undefined> {
    const touches = await touchedBy(entries, (seq) => this.timeline.getEntry({ inbox, seq }));
    if (touches === undefined) return new NoConvs(`deletes or reads name over ${MAX_TARGET_LOOKUPS} entries outside the push`);
    if (touches.size === 0) return undefined; // receipts, ticks: nothing to say, nothing to read
    const list = [...touches.values()];
    // The watermark and the states in one round: a state the index lacks is absent, not lagging,
    // only when the index had reached the pushed entries.
    const [watermark, states] = await Promise.all([
      this.index.headSeq(inbox),
      Promise.all(list.map((t) => this.index.getConversation({ inbox, conv: t.conv }))),
    ]);
    if (watermark < lastSeq) return new NoConvs(`index at ${watermark}, push up to ${lastSeq}`);
    const out: ConversationState[] = [];
    for (const [i, state] of states.entries()) {
      if (state === null) continue;
      const touch = list[i] as Touch;
      if (state.asOfSeq < touch.seq) return new NoConvs(`${conversationKey(touch.conv)} at ${state.asOfSeq}, touched at ${touch.seq}`);
      out.push(state);
    }
    if (out.length === 0 || this.streamSides === undefined) return out;
    return this.streamSides.withStreamSides({ inbox, states: out });
  }
}

/**
 * Conversations touched by `entries` (ascending), by key, with the newest entry touching each
 * (core apply.ts says which): an activity entry, a conversation read, a clear, a recall or an
 * edit its `conv`; a read by seqs or a delete those of the activity entries it names, looked up in
 * the push first, then in the inbox — at most MAX_TARGET_LOOKUPS of them, else undefined (a
 * push is not held back for a delete of a thousand entries: its client syncs instead).
 */
export async function touchedBy(
  entries: readonly Entry[],
  lookup: (seq: number) => Promise<Entry | null>,
): Promise<Map<string, Touch> | undefined> {
  const touches = new Map<string, Touch>();
  const touch = (conv: Conv, seq: number) => touches.set(conversationKey(conv), { conv, seq });
  const inPush = new Map(entries.map((e) => [e.seq, e]));
  let lookups = 0;
  for (const e of entries) {
    const touched = conversationTouch(e);
    if (touched === null) continue;
    if ('conv' in touched) touch(touched.conv, e.seq);
    else {
      const named = touched.namedSeqs;
      lookups += named.filter((seq) => !inPush.has(seq)).length;
      if (lookups > MAX_TARGET_LOOKUPS) return undefined;
      const targets = await Promise.all(named.map(async (seq) => inPush.get(seq) ?? (await lookup(seq))));
      for (const t of targets) if (t !== null && t.seq < e.seq && isActivity(t)) touch(t.conv, e.seq);
    }
  }
  return touches;
}
