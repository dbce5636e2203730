/** Protocol error codes (docs/protocol.md). Every error that reaches a client carries one. */
export type ErrorCode =
  'BAD_REQUEST' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'TOO_LARGE' | 'RATE_LIMITED' | 'OVERLOADED' | 'RECALL_EXPIRED' | 'INTERNAL';

export const ERROR_CODES: readonly ErrorCode[] = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'TOO_LARGE',
  'RATE_LIMITED',
  'OVERLOADED',
  'RECALL_EXPIRED',
  'INTERNAL',
];

export class SeqlineError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class BadRequestError extends SeqlineError {
  constructor(message: string) {
    super('BAD_REQUEST', message);
  }
}
export class UnauthorizedError extends SeqlineError {
  constructor(message = 'missing or invalid token') {
    super('UNAUTHORIZED', message);
  }
}
export class ForbiddenError extends SeqlineError {
  constructor(message: string) {
    super('FORBIDDEN', message);
  }
}
export class NotFoundError extends SeqlineError {
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}
export class TooLargeError extends SeqlineError {
  constructor(message: string) {
    super('TOO_LARGE', message);
  }
}
export class RateLimitedError extends SeqlineError {
  constructor(message = 'rate limit exceeded') {
    super('RATE_LIMITED', message);
  }
}
export class OverloadedError extends SeqlineError {
  constructor(message = 'server overloaded, retry later', options?: { cause?: unknown }) {
    super('OVERLOADED', message, options);
  }
}
export class RecallExpiredError extends SeqlineError {
  constructor(message = 'recall window (24 h) has passed') {
    super('RECALL_EXPIRED', message);
  }
}
export class InternalError extends SeqlineError {
  constructor(message = 'internal error', options?: { cause?: unknown }) {
    super('INTERNAL', message, options);
  }
}

/**
 * Thrown by a seq ceiling store when the writer's epoch is no longer current: a deposed
 * shard owner must stop handing out seqs. Not a protocol error; gateways map it to INTERNAL.
 */
export class FencedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FencedError';
  }
}

/**
 * The SeqlineError class of `code`, for an error that crossed a process or thread boundary as
 * its code and message (a shard reply over NATS, a thread's reply over a message port).
 */
export function errorOfCode(code: ErrorCode, message: string): SeqlineError {
  switch (code) {
    case 'BAD_REQUEST':
      return new BadRequestError(message);
    case 'UNAUTHORIZED':
      return new UnauthorizedError(message);
    case 'FORBIDDEN':
      return new ForbiddenError(message);
    case 'NOT_FOUND':
      return new NotFoundError(message);
    case 'TOO_LARGE':
      return new TooLargeError(message);
    case 'RATE_LIMITED':
      return new RateLimitedError(message);
    case 'OVERLOADED':
      return new OverloadedError(message);
    case 'RECALL_EXPIRED':
      return new RecallExpiredError(message);
    default:
      return new InternalError(message);
  }
}

/** Normalises anything thrown into a SeqlineError (done once, at the gateway). */
export function toSeqlineError(err: unknown): SeqlineError {
  if (err instanceof SeqlineError) return err;
  return new InternalError('internal error', { cause: err });
}
