/** Server → client frames (PROTOCOL.md "Frames", "Entry"). */
import type { Entry, EntryKind, Json, SeqlineError } from '@seqline/core';

/** An entry as it travels: only the documented fields, undefined ones left out. */
export interface WireEntry {
  seq: number;
  kind: EntryKind;
  appinfo: string;
  conv: { type: 'user' | 'group'; id: string };
  from: string;
  sendTime: number;
  type?: string;
  body?: Json;
  referSeq?: number;
  /** Extension (docs/protocol.md): kind "read", every seq read; referSeq is the highest. */
  seqs?: number[];
  readBy?: string[];
  recall?: { appinfo: string; sendTime: number };
}

/** A message of a read-fanout group stream (group.history). */
export interface WireGroupMessage extends WireEntry {
  gseq: number;
}

export interface WireError {
  code: SeqlineError['code'];
  message: string;
}

/**
 * Copies the documented fields only: whatever else an adapter hangs on an entry (scoped
 * keys, storage flags) never reaches a client.
 */
export function toWireEntry(entry: Entry): WireEntry {
  const wire: WireEntry = {
    seq: entry.seq,
    kind: entry.kind,
    appinfo: entry.appinfo,
    conv: { type: entry.conv.type, id: entry.conv.id },
    from: entry.from,
    sendTime: entry.sendTime,
  };
  if (entry.type !== undefined) wire.type = entry.type;
  if (entry.body !== undefined) wire.body = entry.body;
  if (entry.referSeq !== undefined) wire.referSeq = entry.referSeq;
  if (entry.seqs !== undefined) wire.seqs = entry.seqs;
  if (entry.readBy !== undefined) wire.readBy = entry.readBy;
  if (entry.recall !== undefined) wire.recall = { appinfo: entry.recall.appinfo, sendTime: entry.recall.sendTime };
  return wire;
}

export function toWireGroupMessage(message: Entry & { gseq: number }): WireGroupMessage {
  return { ...toWireEntry(message), gseq: message.gseq };
}

export function toWireError(err: SeqlineError): WireError {
  return { code: err.code, message: err.message };
}

/** `{"id": 7, "ok": true, ...result}`; `id` and `ok` always win over same-named result keys. */
export function encodeReply(id: number, result: object): string {
  // Key order: id and ok first (readable logs); assigned again last so result cannot override them.
  return JSON.stringify(Object.assign({ id, ok: true }, result, { id, ok: true }));
}

export function encodeError(id: number | null, err: SeqlineError): string {
  return JSON.stringify({ id, ok: false, error: toWireError(err) });
}

export function encodePush(prevSeq: number, entries: Entry[]): string {
  return JSON.stringify({ op: 'push', prevSeq, entries: entries.map(toWireEntry) });
}

/**
 * Extension frame (docs/protocol.md): new messages of a read-fanout group stream.
 * `{"op": "group.push", "group", "prevGseq", "messages": [... with gseq]}` — a client whose
 * last gseq of that group equals prevGseq applies them; otherwise it pages group.history.
 */
export function encodeGroupPush(group: string, prevGseq: number, entries: Entry[]): string {
  return JSON.stringify({ op: 'group.push', group, prevGseq, messages: entries.map((e) => toWireGroupMessage({ ...e, gseq: e.seq })) });
}
