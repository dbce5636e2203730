/** The HTTP API's contract: `POST /v1/send`, `GET /v1/sync`, error statuses and bodies. */
import { z } from 'zod';
import { BadRequestError, TooLargeError, type ErrorCode, type SeqlineError } from '@seqline/core';
import { parseOpArgs, type ParsedArgs } from './args.ts';
import { toWireError } from './encode.ts';
import { MAX_FRAME_BYTES } from './limits.ts';
import { limitSchema, sendArgsSchema, seqSchema } from './schemas.ts';

export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  RECALL_EXPIRED: 409,
  TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  OVERLOADED: 503,
};

export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS_BY_CODE[code];
}

/** `POST /v1/send` takes exactly the send op's arguments as its JSON body. */
export const httpSendBodySchema = sendArgsSchema;

/** Query values are strings; only plain decimal integers become numbers (no "", "1e3", "0x1"). */
const queryInt = (v: unknown): unknown => (typeof v === 'string' && /^-?\d{1,16}$/.test(v) ? Number(v) : v);

export const httpSyncQuerySchema = z.object({
  maxSeq: z.preprocess(queryInt, seqSchema),
  limit: z.preprocess(queryInt, limitSchema),
});

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function parseHttpSendBody(raw: string | Buffer | ArrayBuffer): ParsedArgs<'send'> {
  const size = typeof raw === 'string' ? Buffer.byteLength(raw, 'utf8') : raw.byteLength;
  if (size > MAX_FRAME_BYTES) return { ok: false, error: new TooLargeError(`request body is ${size} bytes, limit is ${MAX_FRAME_BYTES}`) };
  let text: string;
  try {
    // Fatal, as for WebSocket frames: bytes that are not UTF-8 would be stored as U+FFFD.
    text = typeof raw === 'string' ? raw : strictUtf8.decode(raw);
  } catch {
    return { ok: false, error: new BadRequestError('request body is not valid UTF-8') };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, error: new BadRequestError('request body is not valid JSON') };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: new BadRequestError('request body must be a JSON object') };
  }
  return parseOpArgs('send', body, text);
}

/** `GET /v1/sync?maxSeq=N&limit=M` → the sync op's arguments (first value of a repeated key). */
export function parseHttpSyncQuery(query: string | URLSearchParams): ParsedArgs<'sync'> {
  const params = typeof query === 'string' ? new URLSearchParams(query) : query;
  const input: Record<string, string> = {};
  for (const [key, value] of params) if (!Object.hasOwn(input, key)) input[key] = value;
  const parsed = httpSyncQuerySchema.safeParse(input);
  if (parsed.success) return { ok: true, args: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join('.') || 'query';
  const message = issue && !/received undefined$/.test(issue.message) ? issue.message : 'is required';
  return { ok: false, error: new BadRequestError(`sync: ${field}: ${message}`) };
}

/** Successful HTTP answer body: `{"ok": true, ...result}` (no id: HTTP correlates by itself). */
export function encodeHttpResult(result: object): string {
  return JSON.stringify(Object.assign({ ok: true }, result, { ok: true }));
}

/** Failed HTTP answer body: `{"ok": false, "error": {"code", "message"}}`. */
export function encodeHttpError(err: SeqlineError): string {
  return JSON.stringify({ ok: false, error: toWireError(err) });
}
