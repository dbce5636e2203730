/**
 * `POST /dev/token {user, tenant?}` → a user token, for the demo page of the embedded server
 * (docs/decisions.md, "Demo page and dev token route"). Anyone on the machine can read the
 * secret file anyway, so the route answers only what the machine itself sends: the socket's
 * peer address must be loopback. A browser on this machine can be steered by foreign pages,
 * so the request must also name a loopback host (no DNS rebinding), come from the page's own
 * origin, and not have passed through a proxy.
 */
import { BlockList, isIP } from 'node:net';
import { BadRequestError, ForbiddenError, SeqlineError, TooLargeError, type Logger } from '@seqline/core';
import { encodeHttpError, httpStatusOf, idSchema, MAX_FRAME_BYTES } from '@seqline/protocol';
import { isSameOrigin, parseHost, type OriginPolicy } from './origin-policy.ts';
import type { HttpReply, HttpRequest } from './transport/transport.ts';

export const DEV_TOKEN_PATH = '/dev/token';

/** Signs user tokens with the server's secret (the embedded server passes issueToken). */
export interface DevTokenIssuer {
  issue(user: string, tenant: string): Promise<{ token: string; expiresAt: number }>;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6'); // IPv4-mapped 127/8 on a dual-stack socket

/** True for 127.0.0.0/8, ::1 and ::ffff:127.x in any text form; false for anything else or nothing. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  return LOOPBACK.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The Host header names this machine's loopback: `localhost`, `*.localhost`, 127/8, [::1]. */
export function isLoopbackHost(host: string | undefined): boolean {
  const hostname = parseHost(host)?.hostname;
  if (hostname === undefined) return false;
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  return isLoopbackAddress(hostname.replace(/^\[(.*)\]$/, '$1'));
}

const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'];

export interface DevTokenRouteDeps {
  issuer: DevTokenIssuer;
  origins: OriginPolicy;
  logger: Logger;
}

/** The route's handler; every method but POST is 405 (no CORS preflight: same origin only). */
export function createDevTokenRoute(deps: DevTokenRouteDeps): (req: HttpRequest) => Promise<HttpReply> {
  return async (req) => {
    if (req.method !== 'POST') return errorReply(new BadRequestError(`use POST ${DEV_TOKEN_PATH}`), 405, { allow: 'POST' });
    try {
      refuseUnlessLocal(req, deps.origins);
      if (req.bodyTooLarge) throw new TooLargeError(`request body exceeds ${MAX_FRAME_BYTES} bytes`);
      const { user, tenant } = parseBody(req.body);
      const issued = await deps.issuer.issue(user, tenant ?? 'default');
      deps.logger.info({ user, tenant: tenant ?? 'default' }, 'dev token issued');
      const body = { ok: true, token: issued.token, user, tenant: tenant ?? 'default', expiresAt: issued.expiresAt };
      return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(body) };
    } catch (err) {
      if (err instanceof SeqlineError) {
        if (err.code === 'FORBIDDEN') deps.logger.warn({ remoteAddress: req.remoteAddress, reason: err.message }, 'dev token refused');
        return errorReply(err);
      }
      throw err;
    }
  };
}

function refuseUnlessLocal(req: HttpRequest, origins: OriginPolicy): void {
  if (!isLoopbackAddress(req.remoteAddress)) throw new ForbiddenError('the dev token route answers loopback clients only');
  // Behind a local reverse proxy every peer looks like loopback: a forwarded request is remote.
  if (FORWARDING_HEADERS.some((name) => req.header(name) !== undefined))
    throw new ForbiddenError('the dev token route is not served through a proxy');
  const host = req.header('host');
  if (!isLoopbackHost(host)) throw new ForbiddenError('the dev token route answers requests to a loopback host name only');
  const origin = req.header('origin');
  if (origin !== undefined && !isSameOrigin(origin, host)) throw new ForbiddenError('the dev token route answers its own origin only');
  if (origin !== undefined && !origins.allows(origin, host)) throw new ForbiddenError('origin not allowed');
}

/** `{"user": id, "tenant"?: id}` and nothing else. */
function parseBody(body: Buffer): { user: string; tenant: string | undefined } {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequestError('body: not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new BadRequestError('body: must be a JSON object');
  const fields = json as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => key !== 'user' && key !== 'tenant');
  if (unknown.length > 0) throw new BadRequestError(`body: unknown field ${unknown[0]}`);
  const user = idSchema.safeParse(fields['user']);
  if (!user.success) throw new BadRequestError(`user: ${user.error.issues[0]?.message ?? 'invalid'}`);
  if (fields['tenant'] === undefined) return { user: user.data, tenant: undefined };
  const tenant = idSchema.safeParse(fields['tenant']);
  if (!tenant.success) throw new BadRequestError(`tenant: ${tenant.error.issues[0]?.message ?? 'invalid'}`);
  return { user: user.data, tenant: tenant.data };
}

function errorReply(error: SeqlineError, status?: number, headers?: Record<string, string>): HttpReply {
  return {
    status: status ?? httpStatusOf(error.code),
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: encodeHttpError(error),
  };
}
