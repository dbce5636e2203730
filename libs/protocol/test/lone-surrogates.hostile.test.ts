/**
 * The lone-surrogate rule (docs/protocol.md): a string with an unpaired UTF-16 surrogate has no
 * UTF-8 form, so it cannot be stored byte for byte. WebSocket frames and HTTP bodies are both
 * refused with BAD_REQUEST wherever it sits — value or key, known or ignored field, any depth —
 * while well-formed text (astral pairs, U+FFFD, NUL, BOM) passes untouched.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRequest, OPS, parseHttpSendBody, type DecodedRequest, type ParsedArgs } from '@seqline/protocol';

const send = { appinfo: '0192-a', to: { user: 'bob' }, type: 'text', body: { text: 'hi' } };

function refusedFrame(decoded: DecodedRequest): string {
  if (decoded.ok) throw new Error(`accepted ${JSON.stringify(decoded.request)}`);
  expect(decoded.error.code).toBe('BAD_REQUEST');
  return decoded.error.message;
}

function refusedHttp(parsed: ParsedArgs<'send'>): string {
  if (parsed.ok) throw new Error(`accepted ${JSON.stringify(parsed.args)}`);
  expect(parsed.error.code).toBe('BAD_REQUEST');
  return parsed.error.message;
}

/** JSON text with the surrogate escaped, as JSON.stringify (and an attacker) writes it. */
const wire = (fields: Record<string, unknown>): string => JSON.stringify(fields);

const lone = fc
  .tuple(fc.string({ maxLength: 3 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 3 }))
  .map(([a, unit, b]) => `${a}${String.fromCharCode(unit)}${b}`);

describe('unpaired surrogates are refused at decode time', () => {
  const places: Array<[string, (bad: string) => Record<string, unknown>]> = [
    ['body string', (bad) => ({ ...send, body: bad })],
    ['body key', (bad) => ({ ...send, body: { [bad]: 1 } })],
    ['deep body string', (bad) => ({ ...send, body: [{ a: [[{ b: bad }]] }] })],
    ['deep body key', (bad) => ({ ...send, body: { a: [{ [`__proto__${bad}`]: null }] } })],
    ['type', (bad) => ({ ...send, type: bad })],
    ['appinfo', (bad) => ({ ...send, appinfo: `x${bad}` })],
    ['ignored field', (bad) => ({ ...send, note: bad })],
    ['ignored field name', (bad) => ({ ...send, [bad]: true })],
  ];

  it.each(places)('in the %s of a send, over WebSocket and HTTP', (_where, build) => {
    fc.assert(
      fc.property(lone, (bad) => {
        const fields = build(bad);
        refusedFrame(decodeRequest(wire({ id: 1, op: 'send', ...fields })));
        refusedFrame(decodeRequest(Buffer.from(wire({ id: 1, op: 'send', ...fields }))));
        refusedFrame(
          decodeRequest(
            JSON.stringify({ id: 1, op: 'send', ...fields }).replace(/\\u(d[89a-f][0-9a-f]{2})/g, (_m, hex: string) =>
              String.fromCharCode(parseInt(hex, 16)),
            ),
          ),
        );
        refusedHttp(parseHttpSendBody(wire(fields)));
      }),
      { numRuns: 50 },
    );
  });

  it('names the field, never echoes the surrogate', () => {
    expect(refusedFrame(decodeRequest(wire({ id: 1, op: 'send', ...send, body: { k: '\uD800' } })))).toBe(
      'send: body: contains an unpaired UTF-16 surrogate (not valid Unicode)',
    );
    expect(refusedFrame(decodeRequest(wire({ id: 1, op: 'send', ...send, '\uDC00': 1 })))).toBe(
      'send: a field name: contains an unpaired UTF-16 surrogate (not valid Unicode)',
    );
  });

  it('in any string argument of every op', () => {
    for (const op of OPS) {
      const decoded = decodeRequest(
        wire({ id: 3, op, group: 'g1', name: 'n\uDBFF', members: ['a'], appinfo: 'x', maxSeq: 0, seqs: [1], gseq: 1, extra: '\uDFFF' }),
      );
      expect(decoded).toMatchObject({ ok: false, id: 3, error: { code: 'BAD_REQUEST' } });
    }
  });

  it('accepts well-formed text: surrogate pairs, U+FFFD, NUL, BOM, line separators, "__proto__" keys', () => {
    const body = JSON.parse('{"__proto__": {"a": "\\ud83d\\ude00"}, "t": "\\ufffd\\u0000\\ufeff\\u2028", "\\ud800\\udc00": 1}') as unknown;
    const text = wire({ id: 1, op: 'send', ...send, type: '\uD83D\uDE00', body });
    const decoded = decodeRequest(text);
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(JSON.stringify(decoded.request.args)).toBe(JSON.stringify({ ...send, type: '\uD83D\uDE00', body }));
    expect(parseHttpSendBody(Buffer.from(wire({ ...send, body })))).toMatchObject({ ok: true });
  });

  it('HTTP: a body that is not UTF-8 is refused, not read as U+FFFD', () => {
    const head = Buffer.from(`{"appinfo":"a","to":{"user":"bob"},"type":"text","body":"`);
    for (const bad of [[0xed, 0xa0, 0x80], [0xff], [0xc3], [0xf4, 0x90, 0x80, 0x80]]) {
      const raw = Buffer.concat([head, Buffer.from(bad), Buffer.from('"}')]);
      expect(refusedHttp(parseHttpSendBody(raw))).toBe('request body is not valid UTF-8');
      expect(refusedFrame(decodeRequest(raw))).toBe('frame is not valid UTF-8');
    }
  });
});
