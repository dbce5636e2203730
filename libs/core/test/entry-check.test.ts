import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ENTRY_KINDS,
  InternalError,
  MAX_STORED_APPINFO_BYTES,
  assertStorableEntry,
  isStorableAppinfo,
  type Entry,
} from '../src/index.ts';

const entry = (over: Partial<Entry> = {}): Entry => ({
  seq: 1,
  kind: 'msg',
  appinfo: 'a-1',
  conv: { type: 'user', id: 'bob' },
  from: 'alice',
  sendTime: 1_700_000_000_000,
  type: 'text',
  body: { text: 'hi' },
  ...over,
});

const refusal = (over: Partial<Entry>): unknown => {
  try {
    assertStorableEntry('t:alice', entry(over));
    return null;
  } catch (err) {
    return err;
  }
};

describe('assertStorableEntry', () => {
  it('accepts every kind with integer fields, seq 1 and the highest seq below the range bound', () => {
    for (const kind of ENTRY_KINDS) expect(refusal({ kind })).toBeNull();
    expect(refusal({ seq: Number.MAX_SAFE_INTEGER - 1 })).toBeNull();
    expect(refusal({ kind: 'read', referSeq: 0, seqs: [1, 2, 3] })).toBeNull();
    expect(refusal({ kind: 'recall', recall: { appinfo: 'x', sendTime: -5 } })).toBeNull();
  });

  it('refuses a seq the server could not have allocated as an internal error', () => {
    for (const seq of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER, 2 ** 60]) {
      expect(refusal({ seq }), String(seq)).toBeInstanceOf(InternalError);
    }
  });

  it('refuses a missing, unpaired-surrogate or over-long appinfo as a bad request', () => {
    for (const appinfo of ['', 'a\uD800', '\uDC00b', 'x'.repeat(MAX_STORED_APPINFO_BYTES + 1), '€'.repeat(171), '😀'.repeat(129)]) {
      expect(refusal({ appinfo }), appinfo.slice(0, 8)).toBeInstanceOf(BadRequestError);
    }
    expect(refusal({ appinfo: undefined })).toBeInstanceOf(BadRequestError);
  });

  it('refuses an unknown kind and non-integer times and seq references as a bad request', () => {
    const bad: Partial<Entry>[] = [
      { kind: 'bogus' as Entry['kind'] },
      { sendTime: Number.NaN },
      { sendTime: 0.5 },
      { sendTime: Number.NEGATIVE_INFINITY },
      { sendTime: 2 ** 53 },
      { referSeq: 1.25 },
      { referSeq: Number.NaN },
      { referSeq: -0 },
      { sendTime: -0 },
      { seqs: [1, 2.5] },
      { seqs: [Number.POSITIVE_INFINITY] },
      { recall: { appinfo: 'x', sendTime: Number.NaN } },
      { recall: { appinfo: 'x', sendTime: 0.1 } },
      { recall: { appinfo: 'x', sendTime: -0 } },
      { seqs: [1, -0] },
    ];
    for (const over of bad) expect(refusal(over), JSON.stringify(over)).toBeInstanceOf(BadRequestError);
  });

  it('property: an accepted entry survives a JSON round trip unchanged', () => {
    const num = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53));
    fc.assert(
      fc.property(fc.record({ sendTime: num, referSeq: num, seqs: fc.array(num, { maxLength: 3 }) }), (over) => {
        const candidate = entry({ kind: 'read', ...over });
        if (refusal(candidate) !== null) return;
        expect(JSON.parse(JSON.stringify(candidate))).toEqual(candidate);
        for (const n of [candidate.sendTime, candidate.referSeq ?? 0, ...(candidate.seqs ?? [])])
          expect(Number.isSafeInteger(n)).toBe(true);
      }),
    );
  });
});

describe('isStorableAppinfo', () => {
  it('measures UTF-8 bytes: 512 fit, 513 do not, whatever the characters', () => {
    for (const unit of ['x', 'é', '€', '😀']) {
      const size = new TextEncoder().encode(unit).length;
      const fits = unit.repeat(Math.floor(MAX_STORED_APPINFO_BYTES / size));
      expect(isStorableAppinfo(fits), unit).toBe(true);
      expect(isStorableAppinfo(fits + unit), unit).toBe(false);
    }
  });

  it('property: agrees with an exact UTF-8 measure for every well-formed string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (text) => {
        const exact = text.length > 0 && new TextEncoder().encode(text).length <= MAX_STORED_APPINFO_BYTES;
        expect(isStorableAppinfo(text)).toBe(exact);
      }),
    );
  });

  it('refuses empty and unpaired-surrogate appinfos (they could never be stored, so never found)', () => {
    expect(isStorableAppinfo('')).toBe(false);
    expect(isStorableAppinfo('a\uD83D')).toBe(false);
    expect(isStorableAppinfo('a\uD83D\uDE00')).toBe(true);
  });
});
