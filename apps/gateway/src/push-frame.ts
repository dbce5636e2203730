/**
 * The frame of a push, encoded once for all the sockets that deliver it. A push bus hands every
 * subscriber of an inbox the same message, synchronously one after the other (a user's phone
 * and laptop), and a push fanned out to many inboxes shares its `entries` (a read-fanout group's
 * members): the frame is a function of prevSeq, entries, group and convs alone, and messages
 * are read-only once published, so the last frame is reused while those are the same.
 */
import type { PushMessage } from '@seqline/core';
import { encodeGroupPush, encodePush } from '@seqline/protocol';

let last: PushMessage | undefined;
let lastFrame = '';

export function pushFrameOf(push: PushMessage): string {
  if (
    last !== undefined &&
    last.entries === push.entries &&
    last.prevSeq === push.prevSeq &&
    last.group === push.group &&
    last.convs === push.convs
  ) {
    return lastFrame;
  }
  lastFrame =
    push.group === undefined ? encodePush(push.prevSeq, push.entries, push.convs) : encodeGroupPush(push.group, push.prevSeq, push.entries);
  last = push;
  return lastFrame;
}
