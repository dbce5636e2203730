/**
 * The group-stream side of a read-fanout group's conversation, as a pure
 * tally over the stream rows a member may read, fed newest first (the adapter walks the stream
 * backwards from its head, within the member's windows). Walking backwards sees every recall
 * and edit before the message it names (they are appended after it), so one pass gives exact
 * counts and the newest messages with their latest edits.
 *
 * Counted as unread: a `msg` from someone else above the member's cursor, not recalled, that
 * does not name the member in `mentions`. A message naming the member also has a copy in the
 * member's inbox (send.ts), which the inbox index counts (unread and mention); counting it
 * here too would count it twice. `@all` has no inbox copies in a read-fanout group, so it is
 * counted here as a mention.
 *
 * A message the member holds an inbox copy of (their own, or one naming them: holdsStreamCopy)
 * is left to the inbox side for `tail` too: a recall or an edit reaches that copy even when it
 * comes after the member left, where the stream's rows are outside the member's windows. The
 * tally keeps the gseq of each such message it passes (`held`), so the caller can show the
 * inbox copy in its stream form.
 */
import { dedupKeyOf, editedKey, recalledKey, type DedupKey } from '../dedup-key.ts';
import type { EditRef, Entry, GroupMessage } from '../entry.ts';
import { holdsStreamCopy } from '../copy-holders.ts';
import { countsAsUnread, editWins, MENTION_ALL } from './rules.ts';
import { withLatestEdit } from './view.ts';

export interface StreamTallyResult {
  unread: number;
  /** Of those, `@all` messages. */
  mentions: number;
  /** The newest visible messages the member holds no inbox copy of (not recalled, edits applied), newest first. */
  tail: GroupMessage[];
  /** Gseq of each message passed that the member holds an inbox copy of, by dedup key (dedupKeyOf). */
  held: Map<string, number>;
}

export class StreamTally {
  /** Recalled messages by dedup key: a stream holds many senders' messages, two may share an appinfo. */
  private readonly recalled = new Set<DedupKey>();
  /** Edits seen so far (they come before their message in this walk), by the message's dedup key. */
  private readonly edits = new Map<DedupKey, Entry[]>();
  private lowest = Number.POSITIVE_INFINITY;
  private unread = 0;
  private mentions = 0;
  private readonly tail: GroupMessage[] = [];
  private readonly held = new Map<string, number>();

  constructor(
    private readonly self: string,
    private readonly cursor: number,
    private readonly tailWanted: number,
  ) {}

  /** Feeds the next row; rows must come in descending gseq, each once. */
  add(row: Entry): void {
    if (row.seq >= this.lowest) throw new RangeError(`stream rows must descend: ${row.seq} after ${this.lowest}`);
    this.lowest = row.seq;
    if (row.kind === 'recall' && row.recall !== undefined) this.recalled.add(recalledKey(row.from, row.recall));
    if (row.kind === 'edit' && row.edit !== undefined) {
      const key = editedKey(row.from, row.edit);
      const list = this.edits.get(key);
      if (list === undefined) this.edits.set(key, [row]);
      else list.push(row);
    }
    if (row.kind !== 'msg') return;
    if (holdsStreamCopy(row, this.self)) {
      // Shown and counted by the inbox index, through the member's copy (recalled there or not).
      this.held.set(dedupKeyOf(row), row.seq);
      return;
    }
    if (this.recalled.has(dedupKeyOf(row))) return;
    if (this.tail.length < this.tailWanted) this.tail.push({ ...withLatestEdit(row, this.latestEdit(row)), gseq: row.seq });
    if (row.seq <= this.cursor || !countsAsUnread(row, this.self)) return;
    this.unread++;
    if ((row.mentions ?? []).includes(MENTION_ALL)) this.mentions++;
  }

  /** Whether rows at or below `gseq` can still change the result. */
  needsRowsAtOrBelow(gseq: number): boolean {
    return gseq > this.cursor || this.tail.length < this.tailWanted;
  }

  result(): StreamTallyResult {
    return { unread: this.unread, mentions: this.mentions, tail: [...this.tail], held: new Map(this.held) };
  }

  /** The sender's own edit shown (rules.ts: editHits, editWins); edits by anyone else never apply. */
  private latestEdit(message: Entry): EditRef | null {
    let shown: EditRef | null = null;
    // Oldest first, so that on an editedAt tie the one appended later wins, as in the inbox.
    for (const e of [...(this.edits.get(dedupKeyOf(message)) ?? [])].reverse()) {
      if (e.edit !== undefined && e.from === message.from && editWins(shown, e.edit)) shown = e.edit;
    }
    return shown;
  }
}

/** The newer of two messages by sendTime; the same message (dedup key) is shown once, from the stream. */
export function newerMessage(inboxLast: Entry | null, streamLast: GroupMessage | undefined): Entry | null {
  if (streamLast === undefined) return inboxLast;
  if (inboxLast === null || dedupKeyOf(inboxLast) === dedupKeyOf(streamLast)) return streamLast;
  return inboxLast.sendTime > streamLast.sendTime ? inboxLast : streamLast;
}

/**
 * A read-fanout group's last messages: the inbox side's and the stream's, each message once,
 * ascending by sendTime, the newest `limit`. A message in both (the sender's own copy, a
 * mention copy) is the inbox's — recalled, deleted or edited as the inbox index says — in its
 * stream form (`gseq`) when the tally passed it (`held`).
 */
export function mergeConversationMessages(
  inboxSide: readonly Entry[],
  streamTail: readonly GroupMessage[],
  limit: number,
  held: ReadonlyMap<string, number> = new Map(),
): Entry[] {
  const inStream = new Set(streamTail.map(dedupKeyOf));
  const all: Entry[] = [...inboxSide.filter((e) => !inStream.has(dedupKeyOf(e))).map((e) => inStreamForm(e, held)), ...streamTail];
  all.sort((a, b) => a.sendTime - b.sendTime);
  return all.slice(Math.max(0, all.length - limit));
}

/** An inbox copy of a stream message the tally passed, as the stream has it numbered (seq = gseq). */
export function inStreamForm(entry: Entry, held: ReadonlyMap<string, number>): Entry {
  const gseq = entry.kind === 'msg' ? held.get(dedupKeyOf(entry)) : undefined;
  if (gseq === undefined) return entry;
  const shown: GroupMessage = { ...entry, seq: gseq, gseq };
  return shown;
}
