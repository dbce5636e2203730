/**
 * The conversation states a push carries (v1.1 `push {convs}`): read by the inbox's owner once
 * per append, never per socket. All or nothing: `convs` goes out only when the index was exact
 * at or past every pushed entry, so a client can take the states as they come; otherwise (an
 * index lagging its entries, as CQL's may after a failed index write) the push goes without
 * them and the client asks sync. The read is bounded: a slow or failed one never holds a push
 * back longer than `waitMs`.
 */
import { conversationKey, conversationTouch, isActivity } from '@seqline/core';
import type { Conv, ConversationIndex, ConversationState, Entry, InboxKey, Logger, TimelineStore } from '@seqline/core';

export const DEFAULT_PUSH_CONVS_WAIT_MS = 50;
/** Most entries a push's deletes and v1 reads may name outside it before the push goes without convs. */
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

export class PushConversations {
  constructor(
    private readonly index: ConversationIndex,
    private readonly timeline: Pick<TimelineStore, 'getEntry'>,
    private readonly waitMs: number,
    private readonly logger: Logger,
  ) {}

  /** The states of the conversations `entries` touch, or undefined (none touched, lagging, slow, failed). */
  async read(inbox: InboxKey, entries: readonly Entry[]): Promise<ConversationState[] | undefined> {
    const last = entries.at(-1);
    if (last === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<NoConvs>((resolve) => {
      timer = setTimeout(() => resolve(new NoConvs(`index read slower than ${this.waitMs} ms`)), this.waitMs);
    });
    try {
      const found = await Promise.race([
        this.readExact(inbox, entries, last.seq).catch((err: unknown) => new NoConvs(`index read failed: ${String(err)}`)),
        timeout,
      ]);
      if (!(found instanceof NoConvs)) return found;
      this.logger.debug({ inbox, lastSeq: last.seq, reason: found.reason }, 'push without convs');
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private async readExact(inbox: InboxKey, entries: readonly Entry[], lastSeq: number): Promise<ConversationState[] | NoConvs | undefined> {
    const touches = await touchedBy(entries, (seq) => this.timeline.getEntry(inbox, seq));
    if (touches === undefined) return new NoConvs(`deletes or reads name over ${MAX_TARGET_LOOKUPS} entries outside the push`);
    if (touches.size === 0) return undefined; // receipts, ticks: nothing to say, nothing to read
    const list = [...touches.values()];
    // The watermark and the states in one round: a state the index lacks is absent, not lagging,
    // only when the index had reached the pushed entries.
    const [watermark, states] = await Promise.all([
      this.index.headSeq(inbox),
      Promise.all(list.map((t) => this.index.getConversation(inbox, t.conv))),
    ]);
    if (watermark < lastSeq) return new NoConvs(`index at ${watermark}, push up to ${lastSeq}`);
    const out: ConversationState[] = [];
    for (const [i, state] of states.entries()) {
      if (state === null) continue;
      const touch = list[i] as Touch;
      if (state.asOfSeq < touch.seq) return new NoConvs(`${conversationKey(touch.conv)} at ${state.asOfSeq}, touched at ${touch.seq}`);
      out.push(state);
    }
    return out;
  }
}

/**
 * Conversations touched by `entries` (ascending), by key, with the newest entry touching each
 * (core apply.ts says which): an activity entry, a conversation read, a clear, a recall or an
 * edit its `conv`; a v1 read or a delete those of the activity entries it names, looked up in
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
