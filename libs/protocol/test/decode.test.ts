import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeRequest, MAX_BODY_BYTES, MAX_FRAME_BYTES, MAX_PAGE_LIMIT, OPS, type DecodedRequest } from '@seqline/protocol';

const frame = (fields: Record<string, unknown>): string => JSON.stringify(fields);

function ok(decoded: DecodedRequest) {
  if (!decoded.ok) throw new Error(`expected ok, got ${decoded.error.code}: ${decoded.error.message}`);
  return decoded.request;
}

function failure(decoded: DecodedRequest) {
  if (decoded.ok) throw new Error(`expected an error, got ${JSON.stringify(decoded.request)}`);
  return decoded;
}

const send = { appinfo: '0192-a', to: { user: 'bob' }, type: 'text', body: { text: 'hi' } };

describe('decodeRequest: valid frames of every op', () => {
  const cases: Array<[string, Record<string, unknown>, unknown]> = [
    ['send', send, send],
    ['send', { ...send, to: { group: 'g1' }, body: null }, { ...send, to: { group: 'g1' }, body: null }],
    ['sync', { maxSeq: 0 }, { maxSeq: 0, limit: 200 }],
    ['sync', { maxSeq: 41, limit: 5 }, { maxSeq: 41, limit: 5 }],
    ['sync', { maxSeq: 41, limit: 50_000 }, { maxSeq: 41, limit: MAX_PAGE_LIMIT }],
    ['history', { beforeSeq: 10, limit: 3 }, { beforeSeq: 10, limit: 3 }],
    ['history', {}, { beforeSeq: Number.MAX_SAFE_INTEGER, limit: 200 }],
    ['read', { seqs: [1, 2, 3] }, { seqs: [1, 2, 3] }],
    ['recall', { appinfo: 'x' }, { appinfo: 'x' }],
    ['recall', { appinfo: 'x', from: 'alice' }, { appinfo: 'x', from: 'alice' }],
    ['group.create', { name: 'team', members: ['a', 'b'] }, { name: 'team', members: ['a', 'b'] }],
    ['group.create', { name: 'team', members: [], group: 'g1' }, { name: 'team', members: [], group: 'g1' }],
    ['group.add', { group: 'g1', members: ['c'] }, { group: 'g1', members: ['c'] }],
    ['group.remove', { group: 'g1', members: ['c'] }, { group: 'g1', members: ['c'] }],
    ['group.rename', { group: 'g1', name: 'crew' }, { group: 'g1', name: 'crew' }],
    ['group.rename', { groupId: 'g1', name: 'n'.repeat(128) }, { group: 'g1', name: 'n'.repeat(128) }],
    ['group.info', { group: 'g1' }, { group: 'g1' }],
    ['group.info', { groupId: 'g1' }, { group: 'g1' }],
    ['group.history', { group: 'g1', afterGseq: 5 }, { group: 'g1', afterGseq: 5, limit: 200 }],
    ['group.history', { group: 'g1', beforeGseq: 5, limit: 10 }, { group: 'g1', beforeGseq: 5, limit: 10 }],
    ['group.ack', { group: 'g1', gseq: 9 }, { group: 'g1', gseq: 9 }],
    ['group.readers', { group: 'g1', gseq: 9 }, { group: 'g1', gseq: 9, limit: 1000 }],
    ['group.readers', { group: 'g1', gseq: 9, after: 'bob', limit: 5 }, { group: 'g1', gseq: 9, after: 'bob', limit: 5 }],
    ['auth', { token: 'a.b.c' }, { token: 'a.b.c' }],
    // v1.1
    ['send', { ...send, mentions: ['bob', 'bob', 'carol'] }, { ...send, mentions: ['bob', 'carol'] }],
    [
      'history',
      { conv: { type: 'group', id: 'g1' } },
      { beforeSeq: Number.MAX_SAFE_INTEGER, limit: 200, conv: { type: 'group', id: 'g1' } },
    ],
    ['read', { conv: { type: 'user', id: 'bob' }, upToSeq: 9 }, { conv: { type: 'user', id: 'bob' }, upToSeq: 9 }],
    ['conversations', {}, { limit: 50, lastMessages: 0 }],
    ['conversations', { limit: 500, beforeLastSeq: 7, lastMessages: 50 }, { limit: 500, beforeLastSeq: 7, lastMessages: 50 }],
    ['delete', { seqs: [4, 2] }, { seqs: [4, 2] }],
    ['clear', { conv: { type: 'user', id: 'bob' } }, { conv: { type: 'user', id: 'bob' } }],
    ['clear', { conv: { type: 'group', id: 'g1' }, upToSeq: 3 }, { conv: { type: 'group', id: 'g1' }, upToSeq: 3 }],
    ['edit', { appinfo: 'x', body: { text: 'new' } }, { appinfo: 'x', body: { text: 'new' } }],
    ['edit', { appinfo: 'x', body: null, type: 'md' }, { appinfo: 'x', body: null, type: 'md' }],
  ];
  it.each(cases)('%s %j', (op, args, expected) => {
    const request = ok(decodeRequest(frame({ id: 7, op, ...args })));
    expect(request).toEqual({ id: 7, op, args: expected });
  });

  it('covers every op', () => {
    expect(new Set(cases.map(([op]) => op))).toEqual(new Set(OPS));
  });

  it('ignores unknown fields and accepts Buffer and ArrayBuffer frames', () => {
    const text = frame({ id: -3, op: 'sync', maxSeq: 1, future: true });
    expect(ok(decodeRequest(text)).args).toEqual({ maxSeq: 1, limit: 200 });
    expect(ok(decodeRequest(Buffer.from(text))).id).toBe(-3);
    const bytes = new TextEncoder().encode(text);
    expect(ok(decodeRequest(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))).op).toBe('sync');
  });
});

describe('decodeRequest: invalid frames', () => {
  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['send', { ...send, appinfo: undefined }, 'appinfo: is required'],
    ['send', { ...send, appinfo: '' }, 'appinfo'],
    ['send', { ...send, appinfo: 'x'.repeat(129) }, 'appinfo'],
    ['send', { ...send, to: { user: 'a:b' } }, 'to.user'],
    ['send', { ...send, to: { user: 'a', group: 'g' } }, 'to'],
    ['send', { ...send, to: {} }, 'to'],
    ['send', { ...send, to: 'bob' }, 'to'],
    ['send', { ...send, type: 5 }, 'type'],
    ['send', { ...send, body: undefined }, 'body: is required'],
    ['sync', {}, 'maxSeq: is required'],
    ['sync', { maxSeq: -1 }, 'maxSeq'],
    ['sync', { maxSeq: 1.5 }, 'maxSeq'],
    ['sync', { maxSeq: '3' }, 'maxSeq'],
    ['sync', { maxSeq: 1, limit: 0 }, 'limit'],
    ['history', { beforeSeq: 'x' }, 'beforeSeq'],
    ['read', { seqs: [] }, 'seqs'],
    ['read', { seqs: [0] }, 'seqs.0'],
    ['read', { seqs: [1, 2.5] }, 'seqs.1'],
    ['read', { seqs: Array.from({ length: 1001 }, (_, i) => i + 1) }, 'seqs'],
    ['recall', {}, 'appinfo'],
    ['recall', { appinfo: 'x', from: 'a/b' }, 'from'],
    ['recall', { appinfo: 'x', from: 'a:b' }, 'from'],
    ['group.create', { members: [] }, 'name'],
    ['group.create', { name: 'n', members: ['ok', 'bad:id'] }, 'members.1'],
    ['group.create', { name: 'n', members: [], group: 'x:y' }, 'group'],
    ['group.add', { group: 'g', members: [] }, 'members'],
    ['group.remove', { members: ['a'] }, 'group: is required'],
    ['group.info', {}, 'group: is required'],
    ['group.rename', { group: 'g' }, 'name'],
    ['group.rename', { group: 'g', name: '' }, 'name'],
    ['group.rename', { group: 'g', name: 'n'.repeat(129) }, 'name'],
    ['group.rename', { group: 'g', name: 7 }, 'name'],
    ['group.rename', { name: 'n' }, 'group: is required'],
    ['group.rename', { group: 'x:y', name: 'n' }, 'group'],
    ['group.history', { group: 'g', afterGseq: 1, beforeGseq: 2 }, 'beforeGseq'],
    ['group.ack', { group: 'g' }, 'gseq'],
  ];
  it.each(invalid)('%s %j → BAD_REQUEST naming %s', (op, args, field) => {
    const result = failure(decodeRequest(frame({ id: 9, op, ...args })));
    expect(result.id).toBe(9);
    expect(result.error.code).toBe('BAD_REQUEST');
    expect(result.error.message).toContain(`${op}: ${field}`);
  });

  it.each([
    ['not JSON', 'nope', 'not valid JSON'],
    ['truncated JSON', '{"id": 1, "op": "sync"', 'not valid JSON'],
    ['an array', '[{"id":1}]', 'JSON object'],
    ['null', 'null', 'JSON object'],
    ['a number', '42', 'JSON object'],
    ['a string', '"sync"', 'JSON object'],
    ['no id', '{"op":"sync","maxSeq":0}', 'id: is required'],
    ['a string id', '{"id":"g1","op":"group.info"}', 'id: must be an integer'],
    ['a fractional id', '{"id":1.5,"op":"sync","maxSeq":0}', 'id: must be an integer'],
    ['an unsafe id', '{"id":9007199254740993,"op":"sync","maxSeq":0}', 'id: must be an integer'],
  ])('%s → BAD_REQUEST with id null', (_name, raw, message) => {
    const result = failure(decodeRequest(raw));
    expect(result).toMatchObject({ id: null, error: { code: 'BAD_REQUEST' } });
    expect(result.error.message).toContain(message);
  });

  it.each([
    ['unknown', { op: 'nuke' }],
    ['inherited property name', { op: 'toString' }],
    ['prototype key', { op: '__proto__' }],
    ['missing', {}],
    ['non-string', { op: 3 }],
  ])('op %s → BAD_REQUEST with the id', (_name, fields) => {
    const result = failure(decodeRequest(frame({ id: 5, ...fields })));
    expect(result).toMatchObject({ id: 5, error: { code: 'BAD_REQUEST' } });
    expect(result.error.message).toMatch(/^op: unknown op/);
  });

  it('invalid UTF-8 in a binary frame → BAD_REQUEST', () => {
    const result = failure(decodeRequest(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])));
    expect(result.error).toMatchObject({ code: 'BAD_REQUEST', message: 'frame is not valid UTF-8' });
  });

  it('a __proto__ key does not pollute or confuse validation', () => {
    const raw = '{"id":1,"op":"sync","maxSeq":0,"__proto__":{"limit":5000,"polluted":true}}';
    expect(ok(decodeRequest(raw)).args).toEqual({ maxSeq: 0, limit: 200 });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('decodeRequest: sizes', () => {
  const bodyOfBytes = (bytes: number) => 'x'.repeat(bytes - 2); // JSON string quotes count

  it('accepts a body of exactly MAX_BODY_BYTES encoded', () => {
    const request = ok(decodeRequest(frame({ id: 1, op: 'send', ...send, body: bodyOfBytes(MAX_BODY_BYTES) })));
    expect(request.op).toBe('send');
  });

  it('a body one byte over → TOO_LARGE with the frame id', () => {
    const result = failure(decodeRequest(frame({ id: 1, op: 'send', ...send, body: bodyOfBytes(MAX_BODY_BYTES + 1) })));
    expect(result).toMatchObject({ id: 1, error: { code: 'TOO_LARGE' } });
    expect(result.error.name).toBe('TooLargeError');
  });

  it('counts UTF-8 bytes, not characters', () => {
    const chars = Math.floor(MAX_BODY_BYTES / 3); // "中" is 3 bytes
    const result = failure(decodeRequest(frame({ id: 2, op: 'send', ...send, body: { t: '中'.repeat(chars) } })));
    expect(result.error.code).toBe('TOO_LARGE');
  });

  it('a frame above MAX_FRAME_BYTES is refused unparsed, answering a leading id', () => {
    const big = frame({ id: 33, op: 'send', ...send, body: 'y'.repeat(MAX_FRAME_BYTES) });
    expect(failure(decodeRequest(big))).toMatchObject({ id: 33, error: { code: 'TOO_LARGE' } });
    expect(failure(decodeRequest(Buffer.from(big)))).toMatchObject({ id: 33, error: { code: 'TOO_LARGE' } });
    const idLast = JSON.stringify({ op: 'send', body: 'y'.repeat(MAX_FRAME_BYTES), id: 33 });
    expect(failure(decodeRequest(idLast))).toMatchObject({ id: null, error: { code: 'TOO_LARGE' } });
    // Garbage of that size is TOO_LARGE too: the size is checked before anything else.
    expect(failure(decodeRequest('{'.repeat(MAX_FRAME_BYTES + 1))).error.code).toBe('TOO_LARGE');
  });

  it('a deeply nested body → BAD_REQUEST, not a stack overflow later', () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const raw = `{"id":4,"op":"send","appinfo":"a","to":{"user":"b"},"type":"t","body":${deep}}`;
    const result = failure(decodeRequest(raw));
    expect(result).toMatchObject({ id: 4, error: { code: 'BAD_REQUEST' } });
    expect(result.error.message).toContain('body: nests deeper');
    const ok64 = JSON.stringify({ id: 4, op: 'send', ...send, body: JSON.parse('['.repeat(64) + ']'.repeat(64)) });
    expect(decodeRequest(ok64).ok).toBe(true);
  });
});

describe('decodeRequest: never throws (property)', () => {
  const check = (result: DecodedRequest) => {
    if (!result.ok) {
      expect(['BAD_REQUEST', 'TOO_LARGE']).toContain(result.error.code);
      expect(result.id === null || Number.isSafeInteger(result.id)).toBe(true);
    }
  };

  it('on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (raw) => check(decodeRequest(raw))),
      { numRuns: 2000 },
    );
  });

  it('on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => check(decodeRequest(Buffer.from(bytes)))),
      { numRuns: 1000 },
    );
  });

  it('on arbitrary JSON and on frames with a real op and random fields', () => {
    fc.assert(
      fc.property(fc.json(), (raw) => check(decodeRequest(raw))),
      { numRuns: 1000 },
    );
    const fields = fc.dictionary(
      fc.constantFrom(
        'appinfo',
        'to',
        'type',
        'body',
        'maxSeq',
        'limit',
        'beforeSeq',
        'seqs',
        'name',
        'members',
        'group',
        'groupId',
        'afterGseq',
        'beforeGseq',
        'gseq',
        'id',
      ),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(fc.constantFrom(...OPS), fields, fc.integer(), (op, extra, id) => {
        const result = decodeRequest(JSON.stringify({ id, op, ...extra }));
        check(result);
        if (result.ok) expect(result.request.op).toBe(op);
      }),
      { numRuns: 3000 },
    );
  });
});
