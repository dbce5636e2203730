/**
 * The group-stream side of a read-fanout group's conversation (issue #26 item 3), as a pure
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
 */
import type { EditRef, Entry, GroupMessage } from '../entry.ts';
import { countsAsUnread, editWins, MENTION_ALL } from './rules.ts';
import { withLatestEdit } from './view.ts';

export interface StreamTallyResult {
  unread: number;
  /** Of those, `@all` messages. */
  mentions: number;
  /** The newest visible messages (not recalled, edits applied), newest first. */
  tail: GroupMessage[];
}

export class StreamTally {
  private readonly recalled = new Set<string>();
  /** Edits seen so far (they come before their message in this walk), by message appinfo. */
  private readonly edits = new Map<string, Entry[]>();
  private lowest = Number.POSITIVE_INFINITY;
  private unread = 0;
  private mentions = 0;
  private readonly tail: GroupMessage[] = [];

  constructor(
    private readonly self: string,
    private readonly cursor: number,
    private readonly tailWanted: number,
  ) {}

  /** Feeds the next row; rows must come in descending gseq, each once. */
  add(row: Entry): void {
    if (row.seq >= this.lowest) throw new RangeError(`stream rows must descend: ${row.seq} after ${this.lowest}`);
    this.lowest = row.seq;
    if (row.kind === 'recall' && row.recall !== undefined) this.recalled.add(row.recall.appinfo);
    if (row.kind === 'edit' && row.edit !== undefined) {
      const list = this.edits.get(row.edit.appinfo);
      if (list === undefined) this.edits.set(row.edit.appinfo, [row]);
      else list.push(row);
    }
    if (row.kind !== 'msg' || this.recalled.has(row.appinfo)) return;
    if (this.tail.length < this.tailWanted) this.tail.push({ ...withLatestEdit(row, this.latestEdit(row)), gseq: row.seq });
    if (row.seq <= this.cursor || !countsAsUnread(row, this.self)) return;
    const named = row.mentions ?? [];
    if (named.includes(this.self)) return; // counted by the inbox index, through the member's copy
    this.unread++;
    if (named.includes(MENTION_ALL)) this.mentions++;
  }

  /** Whether rows at or below `gseq` can still change the result. */
  needsRowsAtOrBelow(gseq: number): boolean {
    return gseq > this.cursor || this.tail.length < this.tailWanted;
  }

  result(): StreamTallyResult {
    return { unread: this.unread, mentions: this.mentions, tail: [...this.tail] };
  }

  /** The sender's own edit shown (rules.ts: editHits, editWins); edits by anyone else never apply. */
  private latestEdit(message: Entry): EditRef | null {
    let shown: EditRef | null = null;
    // Oldest first, so that on an editedAt tie the one appended later wins, as in the inbox.
    for (const e of [...(this.edits.get(message.appinfo) ?? [])].reverse()) {
      if (e.edit !== undefined && e.from === message.from && editWins(shown, e.edit)) shown = e.edit;
    }
    return shown;
  }
}

/** The newer of two messages by sendTime; the same message (appinfo) is shown once, from the stream. */
export function newerMessage(inboxLast: Entry | null, streamLast: GroupMessage | undefined): Entry | null {
  if (streamLast === undefined) return inboxLast;
  if (inboxLast === null || inboxLast.appinfo === streamLast.appinfo) return streamLast;
  return inboxLast.sendTime > streamLast.sendTime ? inboxLast : streamLast;
}

/**
 * A read-fanout group's last messages: the inbox side's and the stream's, each message once
 * (the stream's copy wins: the sender's own copy and a mention copy are in both), ascending by
 * sendTime, the newest `limit`.
 */
export function mergeConversationMessages(inboxSide: readonly Entry[], streamTail: readonly GroupMessage[], limit: number): Entry[] {
  const inStream = new Set(streamTail.map((m) => m.appinfo));
  const all: Entry[] = [...inboxSide.filter((e) => !inStream.has(e.appinfo)), ...streamTail];
  all.sort((a, b) => a.sendTime - b.sendTime);
  return all.slice(Math.max(0, all.length - limit));
}
