/** Argument checks of the admin service: a bad id or page size is BAD_REQUEST before any read. */
import { BadRequestError, ID_PATTERN } from '@seqline/core';

export const MAX_ADMIN_PAGE = 10_000;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function checkId(what: string, id: string): void {
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw new BadRequestError(`${what}: invalid id ${JSON.stringify(id)}`);
}

export function checkLimit(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_ADMIN_PAGE) {
    throw new BadRequestError(`${what} must be an integer in [1, ${MAX_ADMIN_PAGE}], got ${n}`);
  }
  return n;
}

export function requireSomething(patch: object, what: string): void {
  if (Object.values(patch).every((v) => v === undefined)) throw new BadRequestError(`${what}: nothing to change`);
}
