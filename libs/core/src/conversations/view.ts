/**
 * How the index shapes what a reader sees: a message with its latest edit, and which inbox
 * entries the owner no longer sees. Adapters call these when reading; nothing here is stored.
 */
import type { EditRef, Entry } from '../entry.ts';
import { isActivity, type ConvRecord } from './rules.ts';

/** A conversation as read from the index: its record and its `last` entry (edit applied). */
export interface ConversationState extends ConvRecord {
  last: Entry | null;
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
