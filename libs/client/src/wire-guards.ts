/**
 * Minimal, safe guards: enough that the sync logic never acts on a malformed seq. Split from
 * wire.ts, which re-exports them.
 */
import { ENTRY_KINDS, type Conversation, type Entry } from './wire-entries.ts';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A seq is a non-negative safe integer (0 means "nothing yet"). */
export function isSeq(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

export function isEntry(v: unknown): v is Entry {
  if (!isObj(v)) return false;
  const conv = v['conv'];
  return (
    isSeq(v['seq']) &&
    v['seq'] > 0 &&
    typeof v['kind'] === 'string' &&
    (ENTRY_KINDS as readonly string[]).includes(v['kind']) &&
    typeof v['appinfo'] === 'string' &&
    isObj(conv) &&
    (conv['type'] === 'user' || conv['type'] === 'group') &&
    typeof conv['id'] === 'string' &&
    typeof v['from'] === 'string' &&
    typeof v['sendTime'] === 'number'
  );
}

export function isEntryList(v: unknown): v is Entry[] {
  return Array.isArray(v) && v.every(isEntry);
}

const isCount = (v: unknown): boolean => isSeq(v);
const optionalSeq = (v: unknown): boolean => v === undefined || isSeq(v);

export function isConversation(v: unknown): v is Conversation {
  if (!isObj(v)) return false;
  const conv = v['conv'];
  return (
    isObj(conv) &&
    (conv['type'] === 'user' || conv['type'] === 'group') &&
    typeof conv['id'] === 'string' &&
    isSeq(v['lastSeq']) &&
    (v['last'] === null || isEntry(v['last'])) &&
    isSeq(v['readSeq']) &&
    isCount(v['unread']) &&
    isCount(v['mentions']) &&
    isSeq(v['clearedSeq']) &&
    isSeq(v['asOfSeq']) &&
    (v['title'] === undefined || typeof v['title'] === 'string') &&
    optionalSeq(v['lastGseq']) &&
    optionalSeq(v['readGseq']) &&
    (v['messages'] === undefined || isEntryList(v['messages']))
  );
}

export function isConversationList(v: unknown): v is Conversation[] {
  return Array.isArray(v) && v.every(isConversation);
}

/** True when seqs strictly increase and all are above `after`. */
export function isAscendingAfter(entries: readonly Entry[], after: number): boolean {
  let prev = after;
  for (const e of entries) {
    if (e.seq <= prev) return false;
    prev = e.seq;
  }
  return true;
}
