/** Who is calling: origin policy and token verification, shared by the upgrade and the HTTP API. */
import { ForbiddenError, parseDevice, UnauthorizedError, type Platform } from '@seqline/core';
import type { Caller } from '@seqline/messaging';
import { readRequestToken } from '@seqline/protocol';
import type { OriginPolicy } from './origin-policy.ts';
import type { TransportRequest } from './transport/transport.ts';

/**
 * Verifies a token (e.g. createTokenVerifier from @seqline/protocol); throws or rejects with
 * UnauthorizedError. Keep it synchronous under uWS: see TransportHandlers.upgrade.
 */
export type VerifyToken = (token: string) => { user: string; tenant: string } | Promise<{ user: string; tenant: string }>;

/** Non-browser clients send no Origin and are not subject to the policy. */
export function checkOrigin(req: TransportRequest, policy: OriginPolicy): void {
  const origin = req.header('origin');
  if (origin !== undefined && !policy.allows(origin, req.header('host'))) throw new ForbiddenError('origin not allowed');
}

/**
 * The Authorization header, refused when it was sent more than once: the transports join
 * repeated headers with ", ", and no Bearer token contains a comma (RFC 6750 token68), so a
 * comma means two credentials of which a proxy and the gateway might each believe another.
 */
export function singleAuthorization(req: TransportRequest): string | undefined {
  const authorization = req.header('authorization');
  if (authorization?.includes(',')) throw new UnauthorizedError('more than one Authorization header');
  return authorization;
}

/**
 * The one token of a request: from `Authorization: Bearer` or `?token=`. Ambiguity is refused
 * (docs/protocol.md): a repeated Authorization, a repeated `token` parameter, or a header and
 * a parameter that disagree. The same token in both is accepted.
 */
export function requestToken(req: TransportRequest): string | undefined {
  const fromHeader = readRequestToken(singleAuthorization(req), '');
  const fromQuery = new URLSearchParams(req.query).getAll('token');
  if (fromQuery.length > 1) throw new UnauthorizedError('more than one token query parameter');
  const [queryToken] = fromQuery;
  if (fromHeader !== undefined && queryToken !== undefined && queryToken !== fromHeader) {
    throw new UnauthorizedError('different tokens in Authorization and the token query parameter');
  }
  return fromHeader ?? queryToken;
}

/** The caller of a request; synchronous when `verifyToken` is. */
export function authenticate(req: TransportRequest, policy: OriginPolicy, verifyToken: VerifyToken): Caller | Promise<Caller> {
  checkOrigin(req, policy);
  const token = requestToken(req);
  if (token === undefined) throw new UnauthorizedError('missing token');
  const claims = verifyToken(token);
  const caller = (c: { user: string; tenant: string }): Caller => ({ tenant: c.tenant, user: c.user });
  return claims instanceof Promise ? claims.then(caller) : caller(claims);
}

/** The device a socket names: `dev` and `plat` of its token, or of its connect URL. */
export interface SocketDevice {
  dev?: string;
  plat?: Platform;
}

/**
 * The socket's device (docs/protocol.md, "Devices and the login policy"): the token's claims win;
 * a URL value that differs from the token's is refused (UNAUTHORIZED), an invalid URL value is
 * BAD_REQUEST, an invalid claim (from a custom verifier) UNAUTHORIZED, a repeated parameter UNAUTHORIZED.
 */
export function socketDevice(req: TransportRequest, claims: object): SocketDevice {
  const params = new URLSearchParams(req.query);
  const single = (name: string): string | undefined => {
    const values = params.getAll(name);
    if (values.length > 1) throw new UnauthorizedError(`more than one ${name} query parameter`);
    return values[0];
  };
  const fromUrl = parseDevice(single('dev'), single('plat'), 'url');
  const { dev, plat } = claims as { dev?: unknown; plat?: unknown };
  let fromToken: SocketDevice;
  try {
    fromToken = parseDevice(dev, plat, 'token');
  } catch {
    throw new UnauthorizedError('invalid token: dev/plat');
  }
  for (const key of ['dev', 'plat'] as const) {
    const url = fromUrl[key];
    const token = fromToken[key];
    if (url !== undefined && token !== undefined && url !== token) throw new UnauthorizedError(`the URL's ${key} differs from the token's`);
  }
  return { ...fromUrl, ...fromToken };
}
