/**
 * Admin tokens for the admin HTTP API: JWT HS256 signed with the same secret as user tokens,
 * carrying `role: "admin"`. The subject is `admin:<name>`: the ':' is outside the user id
 * alphabet, so an admin token is never accepted as a user token by the ordinary verifier
 * (and a user token is never an admin token: it has no role).
 */
import { BadRequestError, ForbiddenError, ID_PATTERN, UnauthorizedError, type Clock } from '@seqline/core';
import { secretKey, signHs256, verifyHs256, type TokenSecret } from './tokens.ts';

export const ADMIN_ROLE = 'admin';
const ADMIN_SUBJECT_PREFIX = 'admin:';

export interface AdminClaims {
  /** Who the token was issued to (the part after `admin:`), for audit logs. */
  name: string;
  /** Epoch ms. */
  expiresAt: number;
}

export type AdminTokenVerifier = (token: string) => Promise<AdminClaims>;

export interface IssueAdminTokenOptions {
  secret: TokenSecret;
  /** Operator name recorded in the token (default "operator"). */
  name?: string;
  ttlSeconds: number;
  /** Issue time, epoch ms (default: now). */
  now?: number;
}

export async function issueAdminToken(options: IssueAdminTokenOptions): Promise<string> {
  const name = options.name ?? 'operator';
  if (!ID_PATTERN.test(name)) throw new BadRequestError(`name: invalid id "${name}"`);
  if (!Number.isFinite(options.ttlSeconds) || options.ttlSeconds <= 0) {
    throw new BadRequestError('ttlSeconds: must be a positive number');
  }
  return signHs256({ role: ADMIN_ROLE }, `${ADMIN_SUBJECT_PREFIX}${name}`, options.ttlSeconds, secretKey(options.secret), options.now);
}

export interface AdminTokenVerifierOptions {
  clock?: Clock;
  /** Allowed clock skew (default 5 s). */
  clockToleranceSeconds?: number;
}

/**
 * Rejects with UnauthorizedError when the token is missing, malformed, forged or expired, and
 * with ForbiddenError when it is a valid token without the admin role (e.g. a user token).
 */
export function createAdminTokenVerifier(secret: TokenSecret, options: AdminTokenVerifierOptions = {}): AdminTokenVerifier {
  const key = secretKey(secret);
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  return async (token: string): Promise<AdminClaims> => {
    const payload = verifyHs256(token, key, clockTolerance, options.clock);
    const subject = payload.sub;
    if (payload['role'] !== ADMIN_ROLE || !subject.startsWith(ADMIN_SUBJECT_PREFIX)) {
      throw new ForbiddenError('an admin token is required');
    }
    const name = subject.slice(ADMIN_SUBJECT_PREFIX.length);
    if (!ID_PATTERN.test(name)) throw new UnauthorizedError('invalid token: sub');
    return { name, expiresAt: payload.exp * 1000 };
  };
}
