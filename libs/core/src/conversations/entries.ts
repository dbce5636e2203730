/**
 * The conversation control entries a user writes into their own inbox (and, for an edit, into every
 * copy's inbox), built in one place: messaging appends them, tests and benches generate them.
 * Who may write one (sender only for an edit, own inbox for the rest) is checked by the op.
 */
import type { Conv, EditRef, Entry, Json, NewEntry } from '../entry.ts';
import { ForbiddenError } from '../errors.ts';

/** `read {conv, upToSeq}`: the reader's cursor in one conversation (no receipts). */
export function buildConversationReadEntry(reader: string, conv: Conv, upToSeq: number, now: number, appinfo: string): NewEntry {
  return { kind: 'read', appinfo, conv: { type: conv.type, id: conv.id }, from: reader, sendTime: now, upToSeq };
}

/** `clear {conv, upToSeq}`: the conversation's entries at or below upToSeq are hidden (absent: all). */
export function buildClearEntry(owner: string, conv: Conv, upToSeq: number | undefined, now: number, appinfo: string): NewEntry {
  const entry: NewEntry = { kind: 'clear', appinfo, conv: { type: conv.type, id: conv.id }, from: owner, sendTime: now };
  if (upToSeq !== undefined) entry.upToSeq = upToSeq;
  return entry;
}

/** `delete {seqs}`: its conv is the owner (like a read by seqs), as the seqs span conversations. */
export function buildDeleteEntry(owner: string, seqs: readonly number[], now: number, appinfo: string): NewEntry {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  return { kind: 'delete', appinfo, conv: { type: 'user', id: owner }, from: owner, sendTime: now, seqs: sorted };
}

/** `edit`: the message's new content, carried in the `edit` entry of the message's conversation. */
export function buildEditEntry(
  editor: string,
  message: Pick<Entry, 'appinfo' | 'sendTime' | 'conv' | 'type'>,
  change: { type?: string; body: Json },
  now: number,
  appinfo: string,
): NewEntry {
  const edit: EditRef = {
    appinfo: message.appinfo,
    sendTime: message.sendTime,
    type: change.type ?? message.type ?? '',
    body: change.body,
    editedAt: now,
  };
  return { kind: 'edit', appinfo, conv: { type: message.conv.type, id: message.conv.id }, from: editor, sendTime: now, edit };
}

/**
 * Whether a stored entry is the edit `sent` once more: a retry under the same client editId
 * (same editor, message, type and body; its editedAt is the first attempt's). Anything else
 * stored under that id is another edit, and the retry is refused (EditIdTakenError).
 */
export function isSameEdit(stored: Entry, sent: NewEntry): boolean {
  const a = stored.edit;
  const b = sent.edit;
  if (stored.kind !== 'edit' || a === undefined || b === undefined || stored.from !== sent.from) return false;
  return a.appinfo === b.appinfo && a.sendTime === b.sendTime && a.type === b.type && JSON.stringify(a.body) === JSON.stringify(b.body);
}

/** The client's editId already names another edit of this editor: choose a new one. */
export class EditIdTakenError extends ForbiddenError {
  constructor(editId: string) {
    super(`editId ${JSON.stringify(editId)} already names another edit of yours; retry with the same content, or edit with a new editId`);
  }
}
