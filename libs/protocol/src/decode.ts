/** Client frame decoding: bytes → a typed ClientRequest, or a typed error. Never throws. */
import { BadRequestError, TooLargeError, type SeqlineError } from '@seqline/core';
import { parseOpArgs } from './args.ts';
import { MAX_FRAME_BYTES } from './limits.ts';
import { isOp, type ClientRequest } from './schemas.ts';

export type DecodedRequest = { ok: true; request: ClientRequest } | { ok: false; id: number | null; error: SeqlineError };

export type RawFrame = string | ArrayBuffer | Buffer;

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeRequest(raw: RawFrame): DecodedRequest {
  try {
    return decode(raw);
  } catch {
    // Defensive: nothing below should throw, but a frame must never crash a connection.
    return { ok: false, id: null, error: new BadRequestError('malformed frame') };
  }
}

function decode(raw: RawFrame): DecodedRequest {
  const size = byteLength(raw);
  if (size > MAX_FRAME_BYTES) {
    const text = typeof raw === 'string' ? raw.slice(0, 64) : bytesToText(raw, 64);
    return fail(sniffId(text), new TooLargeError(`frame is ${size} bytes, limit is ${MAX_FRAME_BYTES}`));
  }
  let text: string;
  try {
    text = typeof raw === 'string' ? raw : utf8.decode(raw);
  } catch {
    return fail(null, new BadRequestError('frame is not valid UTF-8'));
  }
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return fail(null, new BadRequestError('frame is not valid JSON'));
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
    return fail(null, new BadRequestError('frame must be a JSON object'));
  }
  const fields = frame as Record<string, unknown>;
  if (!Object.hasOwn(fields, 'id')) return fail(null, new BadRequestError('id: is required'));
  const id = fields['id'];
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) {
    // A string id is most likely a group id put where the request number belongs.
    const hint = typeof id === 'string' ? ' (the request number; name a group with "group")' : '';
    return fail(null, new BadRequestError(`id: must be an integer${hint}`));
  }
  const op = fields['op'];
  if (!isOp(op)) {
    const shown = typeof op === 'string' ? `"${op.slice(0, 32)}"` : typeof op === 'undefined' ? 'missing' : typeof op;
    return fail(id, new BadRequestError(`op: unknown op ${shown}`));
  }
  const parsed = parseOpArgs(op, fields, text);
  if (!parsed.ok) return fail(id, parsed.error);
  return { ok: true, request: { id, op, args: parsed.args } as ClientRequest };
}

function fail(id: number | null, error: SeqlineError): DecodedRequest {
  return { ok: false, id, error };
}

function byteLength(raw: RawFrame): number {
  if (typeof raw !== 'string') return raw.byteLength;
  // A UTF-16 unit encodes to at most 3 UTF-8 bytes: skip the exact count for small frames.
  return raw.length * 3 <= MAX_FRAME_BYTES ? raw.length : Buffer.byteLength(raw, 'utf8');
}

function bytesToText(raw: ArrayBuffer | Buffer, maxBytes: number): string {
  const view = raw instanceof ArrayBuffer ? new Uint8Array(raw, 0, Math.min(maxBytes, raw.byteLength)) : raw.subarray(0, maxBytes);
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('utf8');
}

/** An oversized frame is not parsed, but its id is answered when it leads the object. */
function sniffId(prefix: string): number | null {
  const match = /^\s*\{\s*"id"\s*:\s*(-?\d{1,16})\s*[,}]/.exec(prefix);
  if (!match?.[1]) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : null;
}
