/**
 * What travels on the port between two threads of one process (threads-hub.ts), and how an
 * error crosses it: as its protocol code and message, rebuilt on the other side as the same
 * SeqlineError class.
 */
import { ERROR_CODES, errorOfCode, OverloadedError, SeqlineError, type ErrorCode } from '@seqline/core';

/** A one-way message or a request on a named channel, or the answer to a request. */
export type Frame =
  | { kind: 'msg'; ch: string; body: unknown }
  | { kind: 'req'; ch: string; id: number; body: unknown }
  | { kind: 'res'; id: number; ok: true; value: unknown }
  | { kind: 'res'; id: number; ok: false; error: FrameError };

export interface FrameError {
  code: ErrorCode;
  message: string;
}

/** The other thread is gone (exited, crashed, terminated or closed its hub): OVERLOADED, retry later. */
export class ThreadUnavailableError extends OverloadedError {
  constructor(
    readonly thread: number,
    reason: string,
  ) {
    super(`thread ${thread} unavailable (${reason}), retry later`);
  }
}

export function toFrameError(err: unknown): FrameError {
  if (err instanceof SeqlineError) return { code: err.code, message: err.message };
  return { code: 'INTERNAL', message: err instanceof Error ? `${err.name}: ${err.message}` : 'internal error' };
}

export function fromFrameError(error: FrameError): SeqlineError {
  const code = ERROR_CODES.includes(error.code) ? error.code : 'INTERNAL';
  return errorOfCode(code, typeof error.message === 'string' ? error.message : 'internal error');
}

/** A frame from another thread of this process, checked for shape: a malformed one is dropped. */
export function asFrame(value: unknown): Frame | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as Record<string, unknown>;
  if (f['kind'] === 'msg' && typeof f['ch'] === 'string') return value as Frame;
  if (!Number.isSafeInteger(f['id'])) return undefined;
  if (f['kind'] === 'req' && typeof f['ch'] === 'string') return value as Frame;
  if (f['kind'] === 'res' && (f['ok'] === true || (f['ok'] === false && typeof f['error'] === 'object' && f['error'] !== null)))
    return value as Frame;
  return undefined;
}
