/** Server → client frames (docs/protocol.md "Frames", "Entry"). */
import {
  isGroupMessage,
  type ConversationState,
  type EditRef,
  type Entry,
  type EntryKind,
  type Json,
  type SeqlineError,
} from '@seqline/core';

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
  /** `from`: the recalled message's sender (appinfos are unique per sender only); absent in older recalls. */
  recall?: { appinfo: string; sendTime: number; from?: string };
  /** kind "msg": user ids mentioned, or ["@all"]. */
  mentions?: string[];
  /** kind "edit" (the edit itself), or a "msg" read through the index with its latest edit applied. */
  edit?: WireEdit;
  /** kinds "read" (conversation read) and "clear". */
  upToSeq?: number;
}

export interface WireEdit {
  appinfo: string;
  sendTime: number;
  type: string;
  body: Json;
  editedAt: number;
}

/** One conversation of the caller's inbox, exact at inbox seq `asOfSeq`. */
export interface WireConv {
  conv: { type: 'user' | 'group'; id: string };
  lastSeq: number;
  /** The newest visible message (with its latest edit), null when none is visible. */
  last: WireEntry | null;
  readSeq: number;
  unread: number;
  mentions: number;
  clearedSeq: number;
  asOfSeq: number;
  /** Group conversations: the group's name as your inbox last heard it; absent for 1:1 chats. */
  title?: string;
  /** `conversations {lastMessages}` only: its last visible messages, ascending. */
  messages?: WireEntry[];
  /** Read-fanout groups only: the newest gseq you may read, your group cursor. */
  lastGseq?: number;
  readGseq?: number;
  /** Present (true) when the stream's unread count stopped at its bound: `unread` is a lower bound. */
  unreadCapped?: true;
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
  if (entry.recall !== undefined) {
    const { appinfo, sendTime, from } = entry.recall;
    wire.recall = from === undefined ? { appinfo, sendTime } : { appinfo, sendTime, from };
  }
  if (entry.mentions !== undefined) wire.mentions = [...entry.mentions];
  if (entry.edit !== undefined) wire.edit = toWireEdit(entry.edit);
  if (entry.upToSeq !== undefined) wire.upToSeq = entry.upToSeq;
  return wire;
}

function toWireEdit(edit: EditRef): WireEdit {
  return { appinfo: edit.appinfo, sendTime: edit.sendTime, type: edit.type, body: edit.body, editedAt: edit.editedAt };
}

/**
 * A conversation as sent: the documented fields only (lastMsgSeq is the index's bookkeeping;
 * `last` carries it). `messages` only when the caller asked for them.
 */
export function toWireConv(state: ConversationState, messages?: readonly Entry[]): WireConv {
  const wire: WireConv = {
    conv: { type: state.conv.type, id: state.conv.id },
    lastSeq: state.lastSeq,
    last: state.last === null ? null : toWireConvEntry(state.last),
    readSeq: state.readSeq,
    unread: state.unread,
    mentions: state.mentions,
    clearedSeq: state.clearedSeq,
    asOfSeq: state.asOfSeq,
  };
  if (state.title !== undefined) wire.title = state.title;
  if (messages !== undefined) wire.messages = messages.map(toWireConvEntry);
  if (state.stream !== undefined) {
    wire.lastGseq = state.stream.lastGseq;
    wire.readGseq = state.stream.readGseq;
    if (state.stream.unreadCapped) wire.unreadCapped = true;
  }
  return wire;
}

/** A conversation's message: a group-stream one keeps its gseq (as in group.history). */
function toWireConvEntry(entry: Entry): WireEntry {
  return isGroupMessage(entry) ? toWireGroupMessage(entry) : toWireEntry(entry);
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

/** `{"op": "push", "prevSeq", "entries", "convs"?}`: `convs` only when the owner read them (PushMessage.convs). */
export function encodePush(prevSeq: number, entries: Entry[], convs?: readonly ConversationState[]): string {
  const frame = { op: 'push', prevSeq, entries: entries.map(toWireEntry) };
  return JSON.stringify(convs === undefined ? frame : { ...frame, convs: convs.map((c) => toWireConv(c)) });
}

/**
 * Extension frame (docs/protocol.md): new messages of a read-fanout group stream.
 * `{"op": "group.push", "group", "prevGseq", "messages": [... with gseq]}` — a client whose
 * last gseq of that group equals prevGseq applies them; otherwise it pages group.history.
 */
export function encodeGroupPush(group: string, prevGseq: number, entries: Entry[]): string {
  return JSON.stringify({ op: 'group.push', group, prevGseq, messages: entries.map((e) => toWireGroupMessage({ ...e, gseq: e.seq })) });
}

/**
 * `{"op": "kicked", "by": {"dev"?, "plat"?}}`: this session was displaced by a newer login
 * (the login policy); the socket closes with 4409 next. `by` names the new session's device.
 */
export function encodeKicked(by: { dev?: string; plat?: string }): string {
  const device: { dev?: string; plat?: string } = {};
  if (by.dev !== undefined) device.dev = by.dev;
  if (by.plat !== undefined) device.plat = by.plat;
  return JSON.stringify({ op: 'kicked', by: device });
}
