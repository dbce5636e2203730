/** The request/reply contract and the balancing function: pure, no services. */
import { describe, expect, it } from 'vitest';
import { BadRequestError, InternalError, NotFoundError, OverloadedError, TooLargeError } from '@seqline/core';
import { FencedError, groupKey, inboxKey } from '@seqline/core';
import { ShardNotOwnedError } from '@seqline/seq';
import { ShardLeaseLostError, decodeReply, decodeRequest, fromWireError, preferredOwner, toWireError } from '../src/index.ts';
import { encodeJson, encodeWithEntries, type AppendHead } from '../src/wire.ts';
import { msg } from './support/doubles.ts';

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

describe('inbox request codec', () => {
  it('accepts the three ops', () => {
    const entry = msg('a1');
    expect(decodeRequest(enc({ op: 'append', inbox: 't:u', entries: [entry] }))).toEqual({ op: 'append', inbox: 't:u', entries: [entry] });
    expect(decodeRequest(enc({ op: 'receipt', inbox: 't:u', appinfo: 'a1', readers: ['b'] }))).toEqual({
      op: 'receipt',
      inbox: 't:u',
      appinfo: 'a1',
      readers: ['b'],
    });
    expect(decodeRequest(enc({ op: 'head', inbox: 't:u' }))).toEqual({ op: 'head', inbox: 't:u' });
  });

  it.each([
    ['not JSON', '{'],
    ['no inbox', { op: 'head' }],
    ['unscoped inbox', { op: 'head', inbox: 'u' }],
    ['unknown op', { op: 'drop', inbox: 't:u' }],
    ['entries not an array', { op: 'append', inbox: 't:u', entries: {} }],
    ['entry without appinfo', { op: 'append', inbox: 't:u', entries: [{ ...msg(), appinfo: '' }] }],
    ['entry with a seq', { op: 'append', inbox: 't:u', entries: [{ ...msg(), seq: 5 }] }],
    ['entry of an unknown kind', { op: 'append', inbox: 't:u', entries: [{ ...msg(), kind: 'x' }] }],
    ['receipt without readers', { op: 'receipt', inbox: 't:u', appinfo: 'a', readers: [1] }],
  ])('refuses %s with BadRequestError', (_name, body) => {
    expect(() => decodeRequest(enc(body))).toThrow(BadRequestError);
  });

  it('carries a follow-up append (`then`) both ways, and refuses a malformed one', () => {
    const entry = msg('a1');
    const then = { inbox: 't:v', entries: [msg('a1-copy')], timeoutMs: 1000 };
    expect(decodeRequest(enc({ op: 'append', inbox: 't:u', entries: [entry], then }))).toEqual({
      op: 'append',
      inbox: 't:u',
      entries: [entry],
      then,
    });
    for (const bad of [
      { ...then, inbox: 'v' },
      { ...then, timeoutMs: 0 },
      { ...then, timeoutMs: 1.5 },
      { ...then, timeoutMs: 10_001 },
      { ...then, entries: [{ ...msg(), seq: 1 }] },
      'later',
    ]) {
      expect(() => decodeRequest(enc({ op: 'append', inbox: 't:u', entries: [entry], then: bad }))).toThrow(BadRequestError);
    }
    for (const result of ['appended', 'skipped', 'failed'] as const) {
      expect(decodeReply(enc({ ok: true, outcomes: [{ seq: 3, duplicate: false }], then: result }))).toEqual({
        ok: true,
        outcomes: [{ seq: 3, duplicate: false }],
        then: result,
      });
    }
    expect(() => decodeReply(enc({ ok: true, outcomes: [], then: 'maybe' }))).toThrow();
  });

  it('refuses malformed replies', () => {
    expect(decodeReply(enc({ ok: true, outcomes: [{ seq: 3, duplicate: false }] }))).toEqual({
      ok: true,
      outcomes: [{ seq: 3, duplicate: false }],
    });
    expect(() => decodeReply(enc({ ok: true, outcomes: [{ seq: '3' }] }))).toThrow();
    expect(() => decodeReply(enc({ ok: false, error: { code: 'INTERNAL' } }))).toThrow();
    expect(() => decodeReply(enc('nope'))).toThrow();
  });
});

describe('append requests with pre-serialised entries', () => {
  it('encode byte for byte as the whole request would, and decode back', () => {
    const entries = [msg('a1'), { ...msg('a2'), body: { text: 'quote " and é 😀' } }, msg('a3')];
    const json = entries.map((entry) => JSON.stringify(entry));
    const heads: AppendHead[] = [
      { op: 'append', inbox: inboxKey('t', 'u') },
      { op: 'gappend', group: groupKey('t', 'g') },
    ];
    for (const head of heads) {
      const payload = encodeWithEntries(head, json);
      expect(payload).toEqual(encodeJson({ ...head, entries }));
      expect(decodeRequest(payload)).toEqual({ ...head, entries });
    }
    expect(decodeRequest(encodeWithEntries({ op: 'append', inbox: inboxKey('t', 'u') }, []))).toEqual({
      op: 'append',
      inbox: 't:u',
      entries: [],
    });
  });
});

describe('group stream request codec', () => {
  it('accepts gappend and ghead, keyed by group', () => {
    const entry = msg('g1');
    expect(decodeRequest(enc({ op: 'gappend', group: 't:g', entries: [entry] }))).toEqual({
      op: 'gappend',
      group: 't:g',
      entries: [entry],
    });
    expect(decodeRequest(enc({ op: 'ghead', group: 't:g' }))).toEqual({ op: 'ghead', group: 't:g' });
  });

  it.each([
    ['no group', { op: 'ghead' }],
    ['an inbox instead of a group', { op: 'gappend', inbox: 't:u', entries: [] }],
    ['unscoped group', { op: 'ghead', group: 'g' }],
    ['entries not an array', { op: 'gappend', group: 't:g', entries: 'x' }],
    ['entry with a gseq', { op: 'gappend', group: 't:g', entries: [{ ...msg(), seq: 5 }] }],
    ['a JSON array', [{ op: 'ghead', group: 't:g' }]],
  ])('refuses %s with BadRequestError', (_name, body) => {
    expect(() => decodeRequest(enc(body))).toThrow(BadRequestError);
  });

  it('accepts prevSeq in outcomes only as a safe integer', () => {
    const outcomes = [
      { seq: 9, duplicate: false, prevSeq: 4 },
      { seq: 4, duplicate: true },
    ];
    expect(decodeReply(enc({ ok: true, outcomes }))).toEqual({ ok: true, outcomes });
    expect(() => decodeReply(enc({ ok: true, outcomes: [{ seq: 9, duplicate: false, prevSeq: '4' }] }))).toThrow();
    expect(() => decodeReply(enc({ ok: true, outcomes: [{ seq: 9, duplicate: false, prevSeq: 1.5 }] }))).toThrow();
  });

  it("carries a duplicate's original, refused unless it is an entry stored at the outcome's seq", () => {
    const original = { ...msg('alice', 'first'), seq: 4 };
    const outcomes = [{ seq: 4, duplicate: true, original }];
    expect(decodeReply(enc({ ok: true, outcomes }))).toEqual({ ok: true, outcomes });
    for (const bad of [
      { seq: 4, duplicate: false, original }, // a new entry has no original
      { seq: 5, duplicate: true, original }, // another seq's entry
      { seq: 4, duplicate: true, original: { ...original, kind: 'nope' } },
      { seq: 4, duplicate: true, original: { seq: 4 } },
      { seq: 4, duplicate: true, original: 'entry' },
    ]) {
      expect(() => decodeReply(enc({ ok: true, outcomes: [bad] })), JSON.stringify(bad)).toThrow();
    }
  });
});

describe('wire errors', () => {
  it('marks request errors final and ownership/transient errors retryable', () => {
    expect(toWireError(new BadRequestError('x'))).toEqual({ code: 'BAD_REQUEST', message: 'x', retryable: false });
    expect(toWireError(new TooLargeError('x')).retryable).toBe(false);
    expect(toWireError(new ShardLeaseLostError(3, 'lost'))).toMatchObject({ code: 'OVERLOADED', retryable: true });
    expect(toWireError(new ShardNotOwnedError(3, 't:u')).retryable).toBe(true);
    expect(toWireError(new FencedError('old epoch'))).toMatchObject({ code: 'INTERNAL', retryable: true });
    expect(toWireError(new Error('socket closed'))).toMatchObject({ code: 'INTERNAL', retryable: true });
  });

  it('maps codes back to the SeqlineError classes', () => {
    expect(fromWireError({ code: 'BAD_REQUEST', message: 'm', retryable: false })).toBeInstanceOf(BadRequestError);
    expect(fromWireError({ code: 'NOT_FOUND', message: 'm', retryable: false })).toBeInstanceOf(NotFoundError);
    expect(fromWireError({ code: 'OVERLOADED', message: 'm', retryable: true })).toBeInstanceOf(OverloadedError);
    expect(fromWireError({ code: 'INTERNAL', message: 'm', retryable: true })).toBeInstanceOf(InternalError);
  });
});

describe('preferredOwner (rendezvous hashing)', () => {
  const shards = Array.from({ length: 64 }, (_, i) => i);
  const owners = ['w1', 'w2', 'w3', 'w4'];

  it('gives every owner a fair share and is independent of list order', () => {
    const counts = new Map<string, number>();
    for (const s of shards) {
      const o = preferredOwner(s, owners)!;
      expect(preferredOwner(s, [...owners].reverse())).toBe(o);
      counts.set(o, (counts.get(o) ?? 0) + 1);
    }
    for (const o of owners) expect(counts.get(o)).toBeGreaterThanOrEqual(8);
  });

  it('moves only the shards of an owner that leaves, and only to others', () => {
    const moved = shards.filter((s) => preferredOwner(s, owners) !== preferredOwner(s, owners.slice(0, 3)));
    expect(moved.every((s) => preferredOwner(s, owners) === 'w4')).toBe(true);
    const joined = shards.filter((s) => preferredOwner(s, owners) !== preferredOwner(s, [...owners, 'w5']));
    expect(joined.every((s) => preferredOwner(s, [...owners, 'w5']) === 'w5')).toBe(true);
    expect(joined.length).toBeLessThan((64 / 5) * 2);
  });
});
