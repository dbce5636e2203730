/**
 * The before-send answer parser and failure modes, and the shared-group rule: pure, so every
 * answer a hostile or broken hook could give is tried, by hand and by fast-check.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  areGroupMates,
  BadRequestError,
  candidateGroups,
  groupKey,
  InvalidHookAnswerError,
  MAX_DENY_REASON_LENGTH,
  needsSharedGroup,
  onBeforeSendFailure,
  OverloadedError,
  parseBeforeSendAnswer,
  TooLargeError,
  type Json,
  type Membership,
  type SeqlineError,
} from '../src/index.ts';

/** A stand-in for the protocol's body rule: refuses strings over 10 characters and the marker `"deep"`. */
const checkBody = (body: Json): SeqlineError | null => {
  if (typeof body === 'string' && body.length > 10) return new TooLargeError('body: too large');
  if (body === 'deep') return new BadRequestError('body: too deep');
  return null;
};
const parse = (text: string) => parseBeforeSendAnswer(text, checkBody);

describe('parseBeforeSendAnswer', () => {
  it('reads allow, rewrite (also to null) and deny', () => {
    expect(parse('{"allow":true}')).toEqual({ allow: true });
    expect(parse('{"allow":true,"body":{"t":1},"extra":5}')).toEqual({ allow: true, body: { t: 1 } });
    expect(parse('{"allow":true,"body":null}')).toEqual({ allow: true, body: null });
    expect(parse('{"allow":false,"reason":"spam"}')).toEqual({ allow: false, reason: 'spam' });
    expect(parse(`{"allow":false,"reason":"${'r'.repeat(MAX_DENY_REASON_LENGTH)}"}`)).toMatchObject({ allow: false });
  });

  it.each([
    ['not JSON', '<html>'],
    ['empty', ''],
    ['an array', '[{"allow":true}]'],
    ['a string', '"allow"'],
    ['null', 'null'],
    ['allow missing', '{}'],
    ['allow a string', '{"allow":"yes"}'],
    ['allow a number', '{"allow":1}'],
    ['deny without reason', '{"allow":false}'],
    ['deny with a number reason', '{"allow":false,"reason":5}'],
    ['deny with a too long reason', `{"allow":false,"reason":"${'r'.repeat(MAX_DENY_REASON_LENGTH + 1)}"}`],
    ['a rewrite the body rule refuses (size)', '{"allow":true,"body":"0123456789ab"}'],
    ['a rewrite the body rule refuses (shape)', '{"allow":true,"body":"deep"}'],
  ])('refuses %s with InvalidHookAnswerError (INTERNAL)', (_name, text) => {
    let thrown: unknown;
    try {
      parse(text);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidHookAnswerError);
    expect((thrown as SeqlineError).code).toBe('INTERNAL');
  });

  it('never echoes the answer in its message', () => {
    expect(() => parse('{"allow":false,"reason":{"secret":"s3cr3t"}}')).toThrow(/^before-send hook gave an invalid answer: reason/);
    expect(() => parse('s3cr3t')).not.toThrow(/s3cr3t/);
  });

  it('property: any text either parses to a valid decision or throws InvalidHookAnswerError, nothing else', () => {
    const texts = fc.oneof(
      fc.string(),
      fc.json(),
      fc
        .record(
          {
            allow: fc.oneof(fc.boolean(), fc.jsonValue()),
            reason: fc.oneof(fc.string({ maxLength: 1100 }), fc.jsonValue()),
            body: fc.jsonValue(),
          },
          { requiredKeys: [] },
        )
        .map((o) => JSON.stringify(o)),
    );
    fc.assert(
      fc.property(texts, (text) => {
        let decision;
        try {
          decision = parse(text);
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidHookAnswerError);
          return;
        }
        if (decision.allow) {
          if ('body' in decision) expect(checkBody(decision.body as Json)).toBeNull();
        } else {
          expect(typeof decision.reason).toBe('string');
          expect(decision.reason.length).toBeLessThanOrEqual(MAX_DENY_REASON_LENGTH);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('onBeforeSendFailure', () => {
  it('open stores as sent; closed throws OVERLOADED, or the invalid answer itself', () => {
    expect(onBeforeSendFailure('open', new Error('down'))).toBeUndefined();
    expect(onBeforeSendFailure('open', new InvalidHookAnswerError('x'))).toBeUndefined();
    expect(() => onBeforeSendFailure('closed', new Error('down'))).toThrow(OverloadedError);
    expect(() => onBeforeSendFailure('closed', new Error('down'))).toThrow('before-send hook unavailable');
    expect(() => onBeforeSendFailure('closed', new InvalidHookAnswerError('x'))).toThrow(InvalidHookAnswerError);
  });
});

describe('shared-group rule', () => {
  const open: Membership = { user: 'a', windows: [{ fromGseq: 0, joinedAt: 1 }] };
  const closed: Membership = { user: 'b', windows: [{ fromGseq: 0, toGseq: 3, joinedAt: 1, removedAt: 2 }] };

  it('applies to 1:1 sends to someone else under shared-group only', () => {
    expect(needsSharedGroup('open', 'a', 'b')).toBe(false);
    expect(needsSharedGroup('shared-group', 'a', 'a')).toBe(false);
    expect(needsSharedGroup('shared-group', 'a', 'b')).toBe(true);
  });

  it('group mates are current members both; a removed member or a stranger is not', () => {
    expect(areGroupMates(open, open)).toBe(true);
    expect(areGroupMates(open, closed)).toBe(false);
    expect(areGroupMates(null, open)).toBe(false);
  });

  it('property: candidates are exactly the groups both were ever in, each once', () => {
    const keys = fc.array(fc.constantFrom('g1', 'g2', 'g3', 'g4').map((g) => groupKey('t', g)));
    fc.assert(
      fc.property(keys, keys, (a, b) => {
        const c = candidateGroups(a, b);
        expect(new Set(c).size).toBe(c.length);
        expect(c.sort()).toEqual([...new Set(a.filter((g) => b.includes(g)))].sort());
      }),
    );
  });
});
