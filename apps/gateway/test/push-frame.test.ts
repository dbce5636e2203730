/** A push is encoded once for every socket that delivers it, and again whenever what it says changes. */
import { describe, expect, it, vi } from 'vitest';
import type { Entry, InboxKey, PushMessage } from '@seqline/core';
import * as protocol from '@seqline/protocol';
import { pushFrameOf } from '../src/push-frame.ts';
import { sampleEntry } from './fake-messaging.ts';

vi.mock('@seqline/protocol', async (importOriginal) => {
  const original = await importOriginal<typeof import('@seqline/protocol')>();
  return { ...original, encodePush: vi.fn(original.encodePush), encodeGroupPush: vi.fn(original.encodeGroupPush) };
});

const inbox = (user: string) => `t1:${user}` as InboxKey;

describe('pushFrameOf', () => {
  it('encodes a message once for all its subscribers, and each new message anew', () => {
    const encodePush = vi.mocked(protocol.encodePush);
    encodePush.mockClear();
    const push: PushMessage = { inbox: inbox('alice'), prevSeq: 42, entries: [{ ...sampleEntry, seq: 43 }] };
    const frames = [pushFrameOf(push), pushFrameOf(push), pushFrameOf(push)]; // phone, laptop, tablet
    expect(encodePush).toHaveBeenCalledTimes(1);
    expect(new Set(frames).size).toBe(1);
    expect(JSON.parse(frames[0] as string)).toEqual({ op: 'push', prevSeq: 42, entries: [{ ...sampleEntry, seq: 43 }] });

    // The next message of the same inbox, even with equal-looking entries, is its own frame.
    const next: PushMessage = { inbox: inbox('alice'), prevSeq: 43, entries: [{ ...sampleEntry, seq: 44 }] };
    expect(JSON.parse(pushFrameOf(next))).toMatchObject({ prevSeq: 43, entries: [{ seq: 44 }] });
    // Same entries array, another prevSeq (another inbox's copy): encoded again.
    expect(JSON.parse(pushFrameOf({ ...next, inbox: inbox('bob'), prevSeq: 7 }))).toMatchObject({ prevSeq: 7 });
    // Conversation states ride along: a message carrying them is not the one without.
    const convs: NonNullable<PushMessage['convs']> = [];
    expect(JSON.parse(pushFrameOf({ ...next, convs }))).toMatchObject({ prevSeq: 43, convs: [] });
    expect(encodePush).toHaveBeenCalledTimes(4);
  });

  it('encodes a group push fanned out to many members once', () => {
    const encodeGroupPush = vi.mocked(protocol.encodeGroupPush);
    encodeGroupPush.mockClear();
    const shared = { prevSeq: 9, entries: [{ ...sampleEntry, seq: 10, conv: { type: 'group', id: 'g1' } }] as Entry[], group: 'g1' };
    // A bus fanning one message out to members hands each a copy naming its inbox (publishToEach).
    const frames = ['m1', 'm2', 'm3'].map((user) => pushFrameOf({ ...shared, inbox: inbox(user) }));
    expect(encodeGroupPush).toHaveBeenCalledTimes(1);
    expect(new Set(frames).size).toBe(1);
    expect(JSON.parse(frames[0] as string)).toMatchObject({ op: 'group.push', group: 'g1', prevGseq: 9, messages: [{ gseq: 10 }] });
    // Another group's push with the same entries is not that frame.
    expect(JSON.parse(pushFrameOf({ ...shared, group: 'g2', inbox: inbox('m1') }))).toMatchObject({ group: 'g2' });
    expect(encodeGroupPush).toHaveBeenCalledTimes(2);
  });
});
