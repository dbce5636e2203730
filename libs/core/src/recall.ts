/** Recall rules (I5): only the sender, or a group admin in a group, within 24 h. */
import type { Entry, NewEntry } from './entry.ts';
import { ForbiddenError, NotFoundError, RecallExpiredError } from './errors.ts';
import { recallAppinfo } from './server-ids.ts';

export const RECALL_WINDOW_MS = 24 * 3600 * 1000;

export interface RecallCheck {
  caller: string;
  /** The caller's copy of the message (looked up by appinfo), or null when absent. */
  message: Entry | null;
  /** Whether the caller administers the message's group (ignored for 1:1). */
  isGroupAdmin: boolean;
  now: number;
  windowMs?: number;
}

/**
 * Throws when the recall is not allowed. Order matters: not found, then forbidden, then
 * expired — someone who may not recall learns nothing about the message's age. Exactly at the
 * window's end is still allowed.
 */
export function checkRecall(input: RecallCheck): void {
  const { caller, message, isGroupAdmin, now } = input;
  const windowMs = input.windowMs ?? RECALL_WINDOW_MS;
  if (message === null || message.kind !== 'msg') {
    throw new NotFoundError('message not found');
  }
  const isSender = message.from === caller;
  const isAdminOfGroup = message.conv.type === 'group' && isGroupAdmin;
  if (!isSender && !isAdminOfGroup) {
    throw new ForbiddenError('only the sender or a group admin may recall this message');
  }
  if (now - message.sendTime > windowMs) {
    throw new RecallExpiredError();
  }
}

/**
 * The `recall` control entry for one inbox. `conv` is copied from `original`, so pass the copy
 * of the message in the inbox the entry is written to (1:1 copies differ in conv.id).
 */
export function buildRecallEntry(original: Entry, caller: string, now: number): NewEntry {
  return {
    kind: 'recall',
    // Deterministic, so a retried recall dedups; it names the message's sender (server-ids.ts).
    appinfo: recallAppinfo({ sender: original.from, appinfo: original.appinfo }),
    conv: { type: original.conv.type, id: original.conv.id },
    from: caller,
    sendTime: now,
    recall: { appinfo: original.appinfo, sendTime: original.sendTime, from: original.from },
  };
}
