/**
 * The signature of every hook call (docs/protocol.md, "Hooks"): `Seqline-Timestamp: <unix ms>`
 * and `Seqline-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. Receivers check
 * both: the HMAC proves the body, the timestamp bounds a replay.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TIMESTAMP_HEADER = 'seqline-timestamp';
export const SIGNATURE_HEADER = 'seqline-signature';
/** Receivers reject a timestamp further than this from their clock (either way). */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

export function signHookBody(secret: string, timestampMs: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampMs}.${body}`).digest('hex')}`;
}

/** The headers of a signed call made at `timestampMs`. */
export function hookSignatureHeaders(secret: string, timestampMs: number, body: string): Record<string, string> {
  return { [TIMESTAMP_HEADER]: String(timestampMs), [SIGNATURE_HEADER]: signHookBody(secret, timestampMs, body) };
}

export type HookVerdict = { ok: true } | { ok: false; reason: 'missing' | 'stale' | 'bad-signature' };

export interface HookSignatureInput {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  /** The raw body as received: verify before parsing. */
  body: string;
  nowMs?: number;
  toleranceMs?: number;
}

/** What a receiver runs on every call (also the test receivers' check). Constant-time compare. */
export function verifyHookSignature(input: HookSignatureInput): HookVerdict {
  const { timestamp, signature } = input;
  if (timestamp === undefined || signature === undefined || !/^\d{1,16}$/.test(timestamp)) return { ok: false, reason: 'missing' };
  const at = Number(timestamp);
  if (Math.abs((input.nowMs ?? Date.now()) - at) > (input.toleranceMs ?? SIGNATURE_TOLERANCE_MS)) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(signHookBody(input.secret, at, input.body));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad-signature' };
  return { ok: true };
}
