export * from './limits.ts';
export * from './schemas.ts';
export * from './args.ts';
export * from './decode.ts';
export * from './encode.ts';
export * from './http.ts';
export * from './tokens.ts';
// Error classes live in core; re-exported so wire users need one import.
export {
  SeqlineError,
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  TooLargeError,
  RateLimitedError,
  OverloadedError,
  RecallExpiredError,
  InternalError,
  toSeqlineError,
  ERROR_CODES,
  type ErrorCode,
} from '@seqline/core';
export * from './secret-file.ts';
export * from './admin-tokens.ts';
