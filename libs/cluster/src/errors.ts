import { errorOfCode, SeqlineError } from '@seqline/core';
import type { ErrorCode } from '@seqline/core';

/**
 * This process may not write the shard (lease lost, self-fenced, still waiting out the previous
 * owner, or handing it over). Retryable: the caller re-routes, and the next owner answers.
 */
export class ShardLeaseLostError extends SeqlineError {
  constructor(
    readonly shard: number,
    readonly reason: string,
  ) {
    super('OVERLOADED', `shard ${shard} is not writable here (${reason})`);
  }
}

/** An error as it travels in an `inbox.append.<shard>` reply. */
export interface WireError {
  code: ErrorCode;
  message: string;
  /** True when the same request may succeed on a retry (possibly at another owner). */
  retryable: boolean;
}

/** Codes a retry cannot fix: the request itself is refused. */
const FINAL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'TOO_LARGE',
  'RATE_LIMITED',
  'RECALL_EXPIRED',
]);

/**
 * Owner side. Everything not explicitly final is retryable: appends and receipts are idempotent
 * by appinfo, so a retry of a write that did land returns the original seq.
 */
export function toWireError(err: unknown): WireError {
  if (err instanceof SeqlineError) {
    return { code: err.code, message: err.message, retryable: !FINAL_CODES.has(err.code) };
  }
  const message = err instanceof Error ? `${err.name}: ${err.message}` : 'internal error';
  return { code: 'INTERNAL', message, retryable: true };
}

/** Caller side: the matching SeqlineError class for a code. */
export function fromWireError(wire: WireError): SeqlineError {
  return errorOfCode(wire.code, wire.message);
}
