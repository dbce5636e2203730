import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  answersFor,
  dedupKeyOf,
  ID_PATTERN,
  isClientAppinfo,
  legacyIndexKey,
  messageKey,
  recallAppinfo,
  receiptAppinfo,
  serverEntryKey,
  type DedupKey,
} from '../src/index.ts';

const userId = fc.stringMatching(ID_PATTERN);
const clientAppinfo = fc.string({ minLength: 1, maxLength: 128, unit: 'grapheme' }).filter(isClientAppinfo);
/** Appinfos the server makes for its own entries (some embed a client appinfo or an id). */
const serverAppinfo = fc.oneof(
  clientAppinfo.map((a) => recallAppinfo({ sender: 'alice', appinfo: a })),
  fc.tuple(fc.nat(), fc.nat()).map(([seq, n]) => receiptAppinfo(seq, n)),
  clientAppinfo.map((a) => `tick:${a}`),
  fc.uuid().map((id) => `read:${id}`),
  userId.map((g) => `group:${g}:create`),
  // Anything with a ':' in it, including text shaped like a message key around it.
  fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a}:${b}`),
  fc.tuple(userId, clientAppinfo).map(([u, a]) => `${u}/${a}:x`),
);

describe('dedup keys', () => {
  it('a message key names its sender: two senders of one appinfo get two keys, one sender gets one', () => {
    fc.assert(
      fc.property(userId, userId, clientAppinfo, (a, b, appinfo) => {
        expect(messageKey(a, appinfo) === messageKey(b, appinfo)).toBe(a === b);
        expect(dedupKeyOf({ from: a, appinfo })).toBe(messageKey(a, appinfo));
      }),
    );
  });

  it('message keys are one-to-one over (sender, client appinfo), even when appinfos hold "/"', () => {
    fc.assert(
      fc.property(userId, clientAppinfo, userId, clientAppinfo, (f1, a1, f2, a2) => {
        const same = f1 === f2 && a1 === a2;
        expect(messageKey(f1, a1) === messageKey(f2, a2)).toBe(same);
      }),
    );
    expect(messageKey('a', 'b/c')).toBe('a/b/c');
    expect(messageKey('a/b', 'c')).toBe('a/b/c'); // why ids may not hold '/': the pattern keeps them out
    expect(ID_PATTERN.test('a/b')).toBe(false);
  });

  it('a server entry keeps its appinfo as key, and no message key can equal it', () => {
    fc.assert(
      fc.property(userId, clientAppinfo, serverAppinfo, userId, (from, appinfo, server, serverFrom) => {
        const serverKey = dedupKeyOf({ from: serverFrom, appinfo: server });
        expect(serverKey).toBe(server);
        expect(serverEntryKey(server)).toBe(server);
        expect(messageKey(from, appinfo)).not.toBe(serverKey);
      }),
    );
    expect(() => serverEntryKey('local-1')).toThrow();
  });

  it('the previous layout indexed a message by its plain appinfo; its row answers only for its own sender', () => {
    fc.assert(
      fc.property(userId, userId, clientAppinfo, (from, other, appinfo) => {
        const key = messageKey(from, appinfo);
        expect(legacyIndexKey(key)).toBe(appinfo);
        expect(answersFor({ from, appinfo }, key)).toBe(true);
        expect(answersFor({ from: other, appinfo }, key)).toBe(other === from);
        // A row keyed by text equal to `key`, of another message (appinfo "<from>/<appinfo>"), never answers.
        expect(answersFor({ from: other, appinfo: key }, key)).toBe(false);
      }),
    );
    fc.assert(
      fc.property(serverAppinfo, (server) => {
        expect(legacyIndexKey(server as DedupKey)).toBeUndefined();
      }),
    );
  });

  it('an appinfo with a ":" stored before the client rule keeps its appinfo as key, as it always had', () => {
    expect(messageKey('alice', 'legacy:0001')).toBe('legacy:0001');
  });
});
