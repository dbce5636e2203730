/** Domain types of a timeline. Everything here is plain data: it crosses the wire and the stores. */

export type EntryKind = 'msg' | 'read' | 'receipt' | 'recall' | 'group' | 'tick' | 'edit' | 'delete' | 'clear';
export const ENTRY_KINDS: readonly EntryKind[] = ['msg', 'read', 'receipt', 'recall', 'group', 'tick', 'edit', 'delete', 'clear'];

export type ConvType = 'user' | 'group';

/** The conversation an entry belongs to, from the inbox owner's point of view. */
export interface Conv {
  type: ConvType;
  /** For 1:1, the *other* party; for a group, the group id (tenant-local ids). */
  id: string;
}

export interface RecallRef {
  appinfo: string;
  sendTime: number;
  /**
   * The recalled message's sender (appinfos are unique per sender only; a group admin may recall
   * another member's message). Absent in recalls stored before it was recorded: then the
   * recall's own `from`.
   */
  from?: string;
}

/** kind "edit": the new content of the message `appinfo` (sent at `sendTime`). */
export interface EditRef {
  appinfo: string;
  sendTime: number;
  type: string;
  body: Json;
  /** Epoch ms of the edit; of several edits of one message the latest editedAt is shown. */
  editedAt: number;
}

/** JSON value as carried in a message body. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One item of an inbox (or of a group stream, where `seq` is the gseq). */
export interface Entry {
  seq: number;
  kind: EntryKind;
  /**
   * Chosen by the sender, unique per sender (a server entry's has a ':'); the same in every copy
   * of a message. An inbox de-duplicates by dedupKeyOf(entry): sender and appinfo.
   */
  appinfo: string;
  conv: Conv;
  from: string;
  sendTime: number;
  /** kind "msg": application type (e.g. "text") and body. kind "group": body describes the event. */
  type?: string;
  body?: Json;
  /** kind "read" / "receipt": an entry in this inbox. */
  referSeq?: number;
  /** kind "read": all entries of this inbox that were read (extension; referSeq is the highest). */
  seqs?: number[];
  /** kind "receipt": all readers so far. */
  readBy?: string[];
  /** kind "recall": which message is recalled. */
  recall?: RecallRef;
  /** kind "msg": user ids mentioned, or ['@all']. */
  mentions?: string[];
  /** kind "edit": the edited message and its new content. */
  edit?: EditRef;
  /**
   * kind "clear": entries of `conv` at or below are hidden. kind "read": `conv` is read up to
   * here (a read by seqs has `seqs` instead).
   */
  upToSeq?: number;
}

/** An entry before its inbox has given it a seq. */
export type NewEntry = Omit<Entry, 'seq'>;

/** Result of appending one entry. */
export interface AppendOutcome {
  seq: number;
  /** True when the appinfo was already in this inbox; seq is then the original one. */
  duplicate: boolean;
  /**
   * On a duplicate: the entry as it was first stored (what a resend answers with and
   * delivers), so the caller needs no read after its append. Every store's append sets it
   * (StoredOutcome); an inbox writer passes it on when it has it (InboxWriter.append).
   */
  original?: Entry;
}

/**
 * What a store's append did with one entry: stored it at `seq`, or found its dedup key already
 * stored — then `original` is that entry as stored (`original.seq === seq`).
 */
export type StoredOutcome = { seq: number; duplicate: false } | { seq: number; duplicate: true; original: Entry };

/** A message of a read-fanout group stream. */
export interface GroupMessage extends Entry {
  /** Same as seq; named for the wire. */
  gseq: number;
}
