/**
 * Who holds a copy of a message: the one rule a send's fanout, a resend, a recall and an edit
 * follow, so a recall or an edit reaches exactly the inboxes the message reached (no more: a
 * member who joined later must not learn of it; no fewer: a member removed since still shows
 * it). docs/decisions.md, "Recall and edit reach the copy holders".
 *
 * How a message went is decided once, when it is sent, and each way has its holders:
 * - 1:1 (`direct`): the sender and the peer (a note to self: the sender only);
 * - a write-fanout group message (`inboxes`): the sender and the recipients the send
 *   snapshot — the group's members when the send took it. The snapshot is recorded
 *   (GroupStore.recordRecipients) before its fanout job exists and read back by a resend, a
 *   recall and an edit. Membership windows cannot stand in for it: a change in the same
 *   millisecond as the send, or one that raced it, reads the same as one just before or after;
 * - a read-fanout message (`stream`): the group stream, the sender, and the members it names
 *   (not `@all`): those copies are made when it is sent (mentionCopyRecipients).
 */
import { MENTION_ALL } from './conversations/rules.ts';
import type { Entry } from './entry.ts';
import { RECALL_WINDOW_MS } from './recall.ts';

export type MessageRoute =
  | { way: 'direct' }
  /** `recipients`: the snapshot as recorded; none recorded means no fanout job was ever made. */
  | { way: 'inboxes'; recipients: readonly string[] }
  | { way: 'stream' };

type Message = Pick<Entry, 'from' | 'conv' | 'mentions'>;

/** The write-fanout snapshot of a send: the group's current members but the sender, sorted, once each. */
export function writeFanoutSnapshot(members: readonly string[], sender: string): string[] {
  return [...new Set(members)].filter((m) => m !== sender).sort();
}

/** A read-fanout message's inbox copies besides the sender's own: the members it names (not `@all`). */
export function mentionCopyRecipients(message: Pick<Entry, 'from' | 'mentions'>): string[] {
  return [...new Set(message.mentions ?? [])].filter((u) => u !== MENTION_ALL && u !== message.from);
}

/**
 * Every user whose inbox holds a copy, the sender first. `message` is the sender's copy (in a
 * 1:1 conversation its `conv.id` is the peer).
 */
export function copyHolders(message: Message, route: MessageRoute): string[] {
  const others =
    route.way === 'direct' ? [message.conv.id] : route.way === 'inboxes' ? [...route.recipients] : mentionCopyRecipients(message);
  return [message.from, ...new Set(others.filter((u) => u !== message.from))];
}

/** The holders a recall or an edit still has to reach once `actor`'s own inbox has its entry. */
export function holdersBesides(message: Message, route: MessageRoute, actor: string): string[] {
  return copyHolders(message, route).filter((u) => u !== actor);
}

/**
 * Whether `user` holds an inbox copy of read-fanout stream message `row` (its sender, or named
 * in it). Such a message is shown from that copy: recalls and edits reach it even after the
 * member left, when the stream's later rows are outside the member's windows.
 */
export function holdsStreamCopy(row: Pick<Entry, 'from' | 'mentions'>, user: string): boolean {
  return row.from === user || mentionCopyRecipients(row).includes(user);
}

/**
 * How long a recorded snapshot is kept: past the recall and edit window (24 h), with a day to
 * spare for late resends. A resend after that takes a new snapshot, as a first send would.
 */
export const RECIPIENTS_RETENTION_MS = 2 * RECALL_WINDOW_MS;
