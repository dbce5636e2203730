/** Work limits (I6), changed live by the admin CLI; validated before they take effect. */
import { BadRequestError } from './errors.ts';

export interface Limits {
  /** Fanout jobs of one large group running at once. */
  largeGroupConcurrency: number;
  /** Worker pool sizes per tier. */
  smallPool: number;
  largePool: number;
  hugePool: number;
  /** Requests of one user in flight at once. */
  perUserInFlight: number;
  /** Requests of one tenant in flight at once. */
  perTenantInFlight: number;
  /**
   * Open WebSockets of one user on one gateway process; a new one past it closes that user's
   * oldest there (close code 4429, docs/protocol.md). Per process: not enforced across gateways.
   */
  perUserSockets: number;
}

export const LIMIT_KEYS: readonly (keyof Limits)[] = [
  'largeGroupConcurrency',
  'smallPool',
  'largePool',
  'hugePool',
  'perUserInFlight',
  'perTenantInFlight',
  'perUserSockets',
];

export const DEFAULT_LIMITS: Limits = Object.freeze({
  largeGroupConcurrency: 5,
  smallPool: 16,
  largePool: 8,
  hugePool: 4,
  perUserInFlight: 64,
  perTenantInFlight: 2000,
  perUserSockets: 20,
});

/**
 * Every limit must be a positive integer, and one user may not be allowed more than its whole
 * tenant. Returns a clean copy holding only the known fields.
 */
export function validateLimits(l: Limits): Limits {
  const out = {} as Limits;
  for (const key of LIMIT_KEYS) {
    const v: unknown = l[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
      throw new BadRequestError(`${key} must be a positive integer, got ${String(v)}`);
    }
    out[key] = v;
  }
  if (out.perUserInFlight > out.perTenantInFlight) {
    throw new BadRequestError(`perUserInFlight (${out.perUserInFlight}) must not exceed perTenantInFlight (${out.perTenantInFlight})`);
  }
  return out;
}

/** Applies a partial change (admin CLI `limits set`) and validates the result as a whole. */
export function applyLimitsPatch(current: Limits, patch: Partial<Limits>): Limits {
  const next: Limits = { ...current };
  for (const key of LIMIT_KEYS) {
    const v = patch[key];
    if (v !== undefined) next[key] = v;
  }
  return validateLimits(next);
}

/** A setting of a process is invalid: reported as plain text at start, never as a stack. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
