import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AppinfoTakenError,
  checkResend,
  isClientAppinfo,
  isServerMadeId,
  recallAppinfo,
  receiptAppinfo,
  type Entry,
} from '../src/index.ts';

const msg = (over: Partial<Entry> = {}): Entry => ({
  seq: 3,
  kind: 'msg',
  appinfo: 'x',
  conv: { type: 'user', id: 'bob' },
  from: 'alice',
  sendTime: 1,
  type: 'text',
  body: {},
  ...over,
});

describe('client appinfos', () => {
  it('never equal an id the server makes for its own entries', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 100 }), fc.nat(), fc.nat(), (a, seq, n) => {
        for (const serverId of [
          recallAppinfo({ sender: 'alice', appinfo: a }),
          receiptAppinfo(seq, n),
          `tick:${a}`,
          `read:${a}`,
          `group:${a}:create`,
        ]) {
          expect(isClientAppinfo(serverId)).toBe(false);
        }
      }),
    );
  });

  it('accept what SDKs generate and refuse control characters, lone surrogates and over-long ids', () => {
    expect(isClientAppinfo('0192f0c1-7a1b-7cc3-9e55-5f0d6a1b2c3d')).toBe(true);
    expect(isClientAppinfo('string-body-ü 😀')).toBe(true);
    for (const bad of ['', 'a:b', 'a\u0000', 'a\n', '\uD800', 'x\uDC00y', 'x'.repeat(129)]) expect(isClientAppinfo(bad), bad).toBe(false);
  });

  it('two accepted appinfos that differ are different UTF-8 byte strings (no lone surrogate folds into U+FFFD)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
        (a, b) => {
          fc.pre(a !== b && isClientAppinfo(a) && isClientAppinfo(b));
          expect(Buffer.from(a, 'utf8').equals(Buffer.from(b, 'utf8'))).toBe(false);
        },
      ),
    );
  });

  it('a chosen id of the server-made form (UUIDv7) is recognised', () => {
    expect(isServerMadeId('0192f0c1-7a1b-7cc3-9e55-5f0d6a1b2c3d')).toBe(true);
    expect(isServerMadeId('team-room')).toBe(false);
  });
});

describe('checkResend', () => {
  it("passes only the same sender's message to the same conversation", () => {
    expect(() => checkResend(msg(), 'alice', { type: 'user', id: 'bob' })).not.toThrow();
    expect(() => checkResend(msg(), 'mallory', { type: 'user', id: 'bob' })).toThrow(AppinfoTakenError);
    expect(() => checkResend(msg(), 'alice', { type: 'user', id: 'carol' })).toThrow(AppinfoTakenError);
    expect(() => checkResend(msg(), 'alice', { type: 'group', id: 'bob' })).toThrow(AppinfoTakenError);
    expect(() => checkResend(msg({ kind: 'group' }), 'alice', { type: 'user', id: 'bob' })).toThrow(AppinfoTakenError);
    expect(new AppinfoTakenError('x').code).toBe('FORBIDDEN');
  });
});
