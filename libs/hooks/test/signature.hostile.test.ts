import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hookSignatureHeaders, signHookBody, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyHookSignature } from '../src/index.ts';

const SECRET = 'a-secret-of-sixteen+';
const NOW = 1_760_000_000_000;

function signed(body: string, at = NOW) {
  const h = hookSignatureHeaders(SECRET, at, body);
  return { timestamp: h[TIMESTAMP_HEADER], signature: h[SIGNATURE_HEADER] };
}

describe('hook signatures', () => {
  it('accepts what was signed, as sent', () => {
    const body = '{"type":"notify","badge":3}';
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, ...signed(body) })).toEqual({ ok: true });
    expect(signHookBody(SECRET, NOW, body)).toMatch(/^v1=[0-9a-f]{64}$/);
  });

  it('rejects a tampered body, whatever byte changed', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (body, at, flip) => {
        const sig = signed(body);
        const bytes = Buffer.from(body, 'utf8');
        const i = at % bytes.length;
        bytes[i] = (bytes[i] as number) ^ flip;
        const tampered = bytes.toString('utf8');
        fc.pre(tampered !== body);
        return verifyHookSignature({ secret: SECRET, body: tampered, nowMs: NOW, ...sig }).ok === false;
      }),
    );
  });

  it('rejects a replayed (old) or future timestamp, and a signature moved to another timestamp', () => {
    const body = '{"a":1}';
    const old = signed(body, NOW - 5 * 60_000 - 1);
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, ...old })).toEqual({ ok: false, reason: 'stale' });
    const future = signed(body, NOW + 5 * 60_000 + 1);
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, ...future })).toEqual({ ok: false, reason: 'stale' });
    // An attacker who keeps the old signature but sends a fresh timestamp.
    const moved = { timestamp: String(NOW), signature: old.signature };
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, ...moved })).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('rejects missing, malformed and wrong-key signatures', () => {
    const body = '{}';
    const good = signed(body);
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, timestamp: undefined, signature: good.signature }).ok).toBe(false);
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, timestamp: good.timestamp, signature: undefined }).ok).toBe(false);
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, timestamp: '1e12', signature: good.signature }).ok).toBe(false);
    expect(verifyHookSignature({ secret: SECRET, body, nowMs: NOW, timestamp: good.timestamp, signature: 'v1=00' }).ok).toBe(false);
    expect(verifyHookSignature({ secret: 'another-secret-16ch', body, nowMs: NOW, ...good })).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });
});
