import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ForbiddenError,
  NotFoundError,
  RECALL_WINDOW_MS,
  RecallExpiredError,
  buildRecallEntry,
  checkRecall,
  dedupKeyOf,
  recalledKey,
} from '../src/index.ts';
import type { Entry } from '../src/index.ts';

const T0 = 1_763_700_000_000;
const direct: Entry = {
  seq: 5,
  kind: 'msg',
  appinfo: 'a-1',
  conv: { type: 'user', id: 'bob' },
  from: 'alice',
  sendTime: T0,
  type: 'text',
  body: { text: 'hi' },
};
const inGroup: Entry = { ...direct, appinfo: 'g-1', conv: { type: 'group', id: 'g1' } };

describe('checkRecall', () => {
  it('lets the sender recall within the window, exactly 24 h included', () => {
    expect(RECALL_WINDOW_MS).toBe(86_400_000);
    for (const now of [T0, T0 + 1, T0 + RECALL_WINDOW_MS]) {
      expect(() => checkRecall({ caller: 'alice', message: direct, isGroupAdmin: false, now })).not.toThrow();
    }
  });

  it('expires one millisecond after 24 h', () => {
    expect(() => checkRecall({ caller: 'alice', message: direct, isGroupAdmin: false, now: T0 + RECALL_WINDOW_MS + 1 })).toThrow(
      RecallExpiredError,
    );
  });

  it('honours a custom window', () => {
    const input = { caller: 'alice', message: direct, isGroupAdmin: false, windowMs: 1000 };
    expect(() => checkRecall({ ...input, now: T0 + 1000 })).not.toThrow();
    expect(() => checkRecall({ ...input, now: T0 + 1001 })).toThrow(RecallExpiredError);
  });

  it('is NOT_FOUND for a missing message or a control entry', () => {
    expect(() => checkRecall({ caller: 'alice', message: null, isGroupAdmin: true, now: T0 })).toThrow(NotFoundError);
    for (const kind of ['read', 'receipt', 'recall', 'group', 'tick'] as const) {
      expect(() => checkRecall({ caller: 'alice', message: { ...direct, kind }, isGroupAdmin: true, now: T0 })).toThrow(NotFoundError);
    }
  });

  it('forbids others, and a group admin flag does not help in 1:1', () => {
    expect(() => checkRecall({ caller: 'bob', message: direct, isGroupAdmin: false, now: T0 })).toThrow(ForbiddenError);
    expect(() => checkRecall({ caller: 'bob', message: direct, isGroupAdmin: true, now: T0 })).toThrow(ForbiddenError);
    expect(() => checkRecall({ caller: 'bob', message: inGroup, isGroupAdmin: false, now: T0 })).toThrow(ForbiddenError);
  });

  it("lets a group admin recall others' group messages, still within 24 h", () => {
    expect(() => checkRecall({ caller: 'bob', message: inGroup, isGroupAdmin: true, now: T0 })).not.toThrow();
    expect(() => checkRecall({ caller: 'bob', message: inGroup, isGroupAdmin: true, now: T0 + RECALL_WINDOW_MS + 1 })).toThrow(
      RecallExpiredError,
    );
  });

  it('checks in order: not found, forbidden, expired', () => {
    const late = T0 + 2 * RECALL_WINDOW_MS;
    expect(() => checkRecall({ caller: 'bob', message: { ...direct, kind: 'read' }, isGroupAdmin: false, now: late })).toThrow(
      NotFoundError,
    );
    expect(() => checkRecall({ caller: 'bob', message: direct, isGroupAdmin: false, now: late })).toThrow(ForbiddenError);
  });

  it('carries protocol codes', () => {
    try {
      checkRecall({ caller: 'alice', message: direct, isGroupAdmin: false, now: T0 + RECALL_WINDOW_MS + 1 });
      expect.unreachable();
    } catch (err) {
      expect((err as RecallExpiredError).code).toBe('RECALL_EXPIRED');
    }
  });

  it('property: the sender may recall iff now - sendTime <= window', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 3 * RECALL_WINDOW_MS }), (age) => {
        const call = () => checkRecall({ caller: 'alice', message: direct, isGroupAdmin: false, now: T0 + age });
        if (age <= RECALL_WINDOW_MS) expect(call).not.toThrow();
        else expect(call).toThrow(RecallExpiredError);
      }),
    );
  });
});

describe('buildRecallEntry', () => {
  it('points at the original and copies its conv', () => {
    expect(buildRecallEntry(direct, 'alice', T0 + 10)).toEqual({
      kind: 'recall',
      appinfo: 'recall:alice:a-1',
      conv: { type: 'user', id: 'bob' },
      from: 'alice',
      sendTime: T0 + 10,
      // The message's sender is named: an appinfo is unique per sender only.
      recall: { appinfo: 'a-1', sendTime: T0, from: 'alice' },
    });
  });

  it('is attributed to the caller (a group admin), deterministic for retries', () => {
    const a = buildRecallEntry(inGroup, 'admin', 1);
    const b = buildRecallEntry(inGroup, 'admin', 2);
    expect(a.from).toBe('admin');
    expect(a.appinfo).toBe(b.appinfo);
    // It names the member's message, not one the admin sent with the same appinfo.
    expect(a.recall?.from).toBe(inGroup.from);
    expect(a.recall && recalledKey(a.from, a.recall)).toBe(dedupKeyOf(inGroup));
    expect(recalledKey('alice', { appinfo: 'g-1', sendTime: 1 })).toBe(dedupKeyOf(inGroup)); // a recall stored without `from`
    // Named by the message (its sender), not by who recalls: the sender's own recall is the same entry.
    expect(buildRecallEntry(inGroup, inGroup.from, 3).appinfo).toBe(a.appinfo);
    expect(a.conv).not.toBe(inGroup.conv);
  });
});
