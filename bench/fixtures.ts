/** What the benches write: a typical 1:1 text message, shaped as the messaging service stores it. */
import type { Json, NewEntry } from '@seqline/core';

/** ~90 characters: a short chat line, the common case in an IM timeline. */
export const MESSAGE_TEXT = 'bench message: the quick brown fox jumps over the lazy dog, 0123456789 abcdefghij klmnop';

export function messageBody(): Json {
  return { text: MESSAGE_TEXT };
}

/** A recipient's copy of a 1:1 message from `peer` (conv.id is the other party). */
export function messageEntry(appinfo: string, peer: string, sendTime: number): NewEntry {
  return { kind: 'msg', appinfo, conv: { type: 'user', id: peer }, from: peer, sendTime, type: 'text', body: messageBody() };
}

/** Unique per bench run, so appinfos never collide with an earlier run's. */
export const RUN_ID = `${process.pid.toString(36)}${Date.now().toString(36)}`;
