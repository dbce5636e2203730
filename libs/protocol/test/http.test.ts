import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ForbiddenError } from '@seqline/core';
import { encodeHttpError, encodeHttpResult, httpStatusOf, MAX_BODY_BYTES, parseHttpSendBody, parseHttpSyncQuery } from '@seqline/protocol';

describe('HTTP status mapping', () => {
  it('maps every error code', () => {
    const statuses = Object.fromEntries(ERROR_CODES.map((code) => [code, httpStatusOf(code)]));
    expect(statuses).toEqual({
      BAD_REQUEST: 400,
      UNAUTHORIZED: 401,
      FORBIDDEN: 403,
      NOT_FOUND: 404,
      TOO_LARGE: 413,
      RATE_LIMITED: 429,
      OVERLOADED: 503,
      RECALL_EXPIRED: 409,
      INTERNAL: 500,
    });
  });

  it('bodies', () => {
    expect(encodeHttpResult({ seq: 1, ok: false })).toBe('{"ok":true,"seq":1}');
    expect(JSON.parse(encodeHttpError(new ForbiddenError('no')))).toEqual({ ok: false, error: { code: 'FORBIDDEN', message: 'no' } });
  });
});

describe('parseHttpSendBody', () => {
  const args = { appinfo: 'a1', to: { user: 'bob' }, type: 'text', body: { t: 1 } };

  it('accepts the send args as a JSON body (string, Buffer, ArrayBuffer)', () => {
    expect(parseHttpSendBody(JSON.stringify(args))).toEqual({ ok: true, args });
    expect(parseHttpSendBody(Buffer.from(JSON.stringify(args)))).toEqual({ ok: true, args });
    const bytes = new TextEncoder().encode(JSON.stringify(args));
    expect(parseHttpSendBody(bytes.buffer)).toEqual({ ok: true, args });
  });

  it.each([
    ['not JSON', '{', 'BAD_REQUEST'],
    ['an array', '[]', 'BAD_REQUEST'],
    ['null', 'null', 'BAD_REQUEST'],
    ['missing to', JSON.stringify({ ...args, to: undefined }), 'BAD_REQUEST'],
    ['a big body', JSON.stringify({ ...args, body: 'x'.repeat(MAX_BODY_BYTES) }), 'TOO_LARGE'],
    ['a huge request', JSON.stringify({ ...args, body: 'x'.repeat(MAX_BODY_BYTES * 2) }), 'TOO_LARGE'],
  ])('%s → %s', (_name, raw, code) => {
    const parsed = parseHttpSendBody(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.code).toBe(code);
  });
});

describe('parseHttpSyncQuery', () => {
  it('turns query strings into numbers with defaults and clamping', () => {
    expect(parseHttpSyncQuery('maxSeq=5')).toEqual({ ok: true, args: { maxSeq: 5, limit: 200 } });
    expect(parseHttpSyncQuery('maxSeq=0&limit=7&token=abc')).toEqual({ ok: true, args: { maxSeq: 0, limit: 7 } });
    expect(parseHttpSyncQuery(new URLSearchParams('maxSeq=9&limit=99999'))).toEqual({ ok: true, args: { maxSeq: 9, limit: 1000 } });
    expect(parseHttpSyncQuery('maxSeq=1&maxSeq=2')).toEqual({ ok: true, args: { maxSeq: 1, limit: 200 } });
  });

  it.each([
    ['', 'maxSeq: is required'],
    ['maxSeq=', 'maxSeq'],
    ['maxSeq=abc', 'maxSeq'],
    ['maxSeq=1e3', 'maxSeq'],
    ['maxSeq=-1', 'maxSeq'],
    ['maxSeq=1&limit=0', 'limit'],
    ['maxSeq=1&limit=x', 'limit'],
    ['maxSeq=99999999999999999', 'maxSeq'],
  ])('%j → BAD_REQUEST naming %s', (query, field) => {
    const parsed = parseHttpSyncQuery(query);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error.code).toBe('BAD_REQUEST');
      expect(parsed.error.message).toContain(`sync: ${field}`);
    }
  });
});
