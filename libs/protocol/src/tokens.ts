/**
 * The wire auth contract: JWT HS256 with `sub` = user id, `tid` = tenant id, `exp`.
 * A token without `tid` belongs to the tenant "default" (docs/protocol.md).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { BadRequestError, ID_PATTERN, parseDevice, UnauthorizedError, type Clock, type Platform } from '@seqline/core';

export const DEFAULT_TENANT = 'default';
/** HS256 with a short secret is guessable offline; refuse secrets below this many bytes. */
export const MIN_SECRET_BYTES = 16;

export type TokenSecret = string | Uint8Array;

export interface TokenClaims {
  user: string;
  tenant: string;
  /** Epoch ms. */
  expiresAt: number;
  /** The device id (`dev` claim), when the token names one. */
  dev?: string;
  /** The platform (`plat` claim), when the token names one. */
  plat?: Platform;
}

/**
 * Synchronous on purpose: the gateway accepts a WebSocket inside uWS's upgrade callback, and an
 * upgrade completed after an await is dropped at random by uWS 20.30 (see docs/decisions.md).
 */
export type TokenVerifier = (token: string) => TokenClaims;

export interface IssueTokenOptions {
  secret: TokenSecret;
  user: string;
  tenant?: string;
  ttlSeconds: number;
  /** Issue time, epoch ms (default: now) — lets tests mint already-expired tokens. */
  now?: number;
  /** Binds the token to a device id and platform (the login policy's view of it). */
  dev?: string;
  plat?: Platform;
}

export async function issueToken(options: IssueTokenOptions): Promise<string> {
  const key = secretKey(options.secret);
  const tenant = options.tenant ?? DEFAULT_TENANT;
  if (!ID_PATTERN.test(options.user)) throw new BadRequestError(`user: invalid id "${options.user}"`);
  if (!ID_PATTERN.test(tenant)) throw new BadRequestError(`tenant: invalid id "${tenant}"`);
  if (!Number.isFinite(options.ttlSeconds) || options.ttlSeconds <= 0) {
    throw new BadRequestError('ttlSeconds: must be a positive number');
  }
  const device = parseDevice(options.dev, options.plat, 'token');
  return signHs256({ tid: tenant, ...device }, options.user, options.ttlSeconds, key, options.now);
}

/** Signs `claims` with `sub`, `iat` and `exp` (HS256); shared by user and admin tokens. */
export function signHs256(claims: Record<string, string>, subject: string, ttlSeconds: number, key: Buffer, now?: number): Promise<string> {
  const issuedAt = Math.floor((now ?? Date.now()) / 1000);
  const payload = { ...claims, sub: subject, iat: issuedAt, exp: issuedAt + Math.ceil(ttlSeconds) };
  return Promise.resolve(jwt.sign(payload, key, { algorithm: 'HS256', noTimestamp: true }));
}

/** The claims of a verified token. */
export interface VerifiedPayload {
  sub: string;
  exp: number;
  [claim: string]: unknown;
}

/**
 * The one place a JWT is checked (user and admin tokens alike): HS256 only, `sub` and `exp`
 * required, skew tolerated; any failure is UnauthorizedError and never echoes the token.
 */
export function verifyHs256(token: string, key: Buffer, clockTolerance: number, clock?: Clock): VerifiedPayload {
  if (typeof token !== 'string' || token.length === 0 || token.length > 4096) throw new UnauthorizedError();
  let payload: string | jwt.JwtPayload;
  try {
    payload = jwt.verify(token, keyObjectOf(key), {
      algorithms: ['HS256'],
      clockTolerance,
      ...(clock ? { clockTimestamp: Math.floor(clock.now() / 1000) } : {}),
    });
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) throw new UnauthorizedError('token expired');
    throw new UnauthorizedError('invalid token');
  }
  if (typeof payload === 'string' || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') {
    throw new UnauthorizedError('invalid token');
  }
  return payload as VerifiedPayload;
}

export interface TokenVerifierOptions {
  clock?: Clock;
  /** Allowed clock skew between the issuer and this process (default 5 s). */
  clockToleranceSeconds?: number;
}

/** Returns a verifier that returns the claims or throws UnauthorizedError (never echoes the token). */
export function createTokenVerifier(secret: TokenSecret, options: TokenVerifierOptions = {}): TokenVerifier {
  const key = secretKey(secret);
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  return (token: string): TokenClaims => {
    const payload = verifyHs256(token, key, clockTolerance, options.clock);
    const user = payload.sub;
    const tenant = payload['tid'] ?? DEFAULT_TENANT;
    if (typeof user !== 'string' || !ID_PATTERN.test(user)) throw new UnauthorizedError('invalid token: sub');
    if (typeof tenant !== 'string' || !ID_PATTERN.test(tenant)) throw new UnauthorizedError('invalid token: tid');
    let device: { dev?: string; plat?: Platform };
    try {
      device = parseDevice(payload['dev'], payload['plat'], 'invalid token:');
    } catch (err) {
      throw new UnauthorizedError(err instanceof Error ? err.message : 'invalid token: dev/plat');
    }
    return { user, tenant, expiresAt: payload.exp * 1000, ...device };
  };
}

/**
 * The token of a request: `Authorization: Bearer <token>` first, else the `token` query
 * parameter (browsers cannot set headers on a WebSocket). Undefined when neither is present.
 */
export function readRequestToken(authorization: string | undefined, query: string | URLSearchParams): string | undefined {
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return match[1];
  }
  const params = typeof query === 'string' ? new URLSearchParams(query) : query;
  return params.get('token') ?? undefined;
}

/** "90", "90s", "15m", "24h", "7d" → seconds. */
export function parseTtl(text: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match?.[2] ?? ''];
  const value = Number(match?.[1]);
  if (!match || unit === undefined || !Number.isSafeInteger(value) || value <= 0) {
    throw new BadRequestError(`ttl: "${text}" is not a duration like 3600, 90s, 15m, 24h or 7d`);
  }
  return value * unit;
}

/**
 * jsonwebtoken turns a Buffer key into a KeyObject on every verify: about 600 µs of CPU per
 * token (an upgrade, an HTTP call) against 14 µs with the KeyObject made once per key.
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObjectOf(key: Buffer): KeyObject {
  let keyObject = keyObjects.get(key);
  if (keyObject === undefined) keyObjects.set(key, (keyObject = createSecretKey(key)));
  return keyObject;
}

/** The HMAC key of a secret, built once per verifier or token (user and admin alike). */
export function secretKey(secret: TokenSecret): Buffer {
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  if (key.byteLength < MIN_SECRET_BYTES) {
    throw new Error(`token secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return key;
}
