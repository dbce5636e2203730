/**
 * How the index shapes what a reader sees: a message with its latest edit, and which inbox
 * entries the owner no longer sees. Adapters call these when reading; nothing here is stored.
 */
import type { EditRef, Entry, GroupMessage } from '../entry.ts';
import { isActivity, type ConvRecord } from './rules.ts';

/**
 * The group-stream side of a read-fanout group's conversation, in gseq terms.
 * The record's unread and mentions then add the stream's counts to the inbox side's.
 */
export interface ConversationStreamSide {
  /** The newest gseq the member may read: the stream head, clipped to its membership windows. */
  lastGseq: number;
  /** The member's group cursor (group.ack). */
  readGseq: number;
  /** True when counting stopped at the per-group scan bound: unread is then a lower bound. */
  unreadCapped: boolean;
}

/** A conversation as read from the index: its record and its `last` entry (edit applied). */
export interface ConversationState extends ConvRecord {
  /** A GroupMessage (it carries gseq) when the newest visible message is a group-stream one. */
  last: Entry | null;
  /** Read-fanout groups only: the stream side, absent for every other conversation. */
  stream?: ConversationStreamSide;
}

/** Whether an entry is a group-stream message (it carries its gseq), not an inbox entry. */
export function isGroupMessage(entry: Entry): entry is GroupMessage {
  return typeof (entry as Partial<GroupMessage>).gseq === 'number';
}

/**
 * Edits are kept beside the message (a side table: message seq → the edit shown), never
 * written over it: the inbox keeps what was sent and the `edit` entry says what changed, so a
 * client replaying the inbox gets the same result as one reading `last` or history. This is the
 * message as history and `last` show it: the edited type and body, and `edit` so a client can
 * mark it edited.
 */
export function withLatestEdit(message: Entry, edit: EditRef | null): Entry {
  if (edit === null || message.kind !== 'msg') return message;
  return { ...message, type: edit.type, body: edit.body, edit };
}

/**
 * Whether the inbox owner no longer sees `entry` in sync and history: it was deleted for them,
 * or it is an activity entry of a conversation cleared at or above it. Control entries stay
 * (another device still needs a read or recall to apply), unless deleted themselves.
 */
export function hiddenFromOwner(entry: Entry, deleted: boolean, record: ConvRecord | null): boolean {
  if (deleted) return true;
  return record !== null && isActivity(entry) && entry.seq <= record.clearedSeq;
}
