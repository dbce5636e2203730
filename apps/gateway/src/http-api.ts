/**
 * HTTP routes: `POST /v1/send`, `GET /v1/sync`, `GET /healthz` (liveness), `GET /readyz`
 * (readiness: sends can be served now), `GET /metrics`; optionally the admin API, a static site
 * (the demo page) and `POST /dev/token` (dev-token.ts).
 */
import {
  BadRequestError,
  NotFoundError,
  OverloadedError,
  RateLimitedError,
  TooLargeError,
  UnauthorizedError,
  type Logger,
  type SeqlineError,
} from '@seqline/core';
import type { Caller, Messaging } from '@seqline/messaging';
import {
  encodeHttpError,
  encodeHttpResult,
  httpStatusOf,
  MAX_FRAME_BYTES,
  parseHttpSendBody,
  parseHttpSyncQuery,
  type ClientRequest,
  type ParsedArgs,
} from '@seqline/protocol';
import { ADMIN_PREFIX } from './admin-api.ts';
import { authenticate, singleAuthorization, type VerifyToken } from './auth.ts';
import type { OriginPolicy } from './origin-policy.ts';
import { createDevTokenRoute, DEV_TOKEN_PATH, type DevTokenIssuer } from './dev-token.ts';
import { dispatch } from './dispatch.ts';
import { toClientError } from './errors.ts';
import type { InFlight } from './in-flight.ts';
import type { Readiness } from './gateway-options.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { RateLimiter } from './rate-limit.ts';
import { staticReply, type StaticSite } from './static-site.ts';
import type { HttpReply, HttpRequest } from './transport/transport.ts';

export interface HttpApiDeps {
  messaging: Messaging;
  verifyToken: VerifyToken;
  origins: OriginPolicy;
  logger: Logger;
  metrics: GatewayMetrics;
  rateLimiter: RateLimiter | null;
  inFlight: InFlight;
  wsPath: string;
  isClosing(): boolean;
  /** The admin API (admin-api.ts) for paths under /v1/admin/, when the server mounts one. */
  admin?: (req: HttpRequest) => Promise<HttpReply>;
  /** Files served by GET/HEAD at their paths (API routes win); absent = none. */
  site?: StaticSite;
  /** Mounts POST /dev/token for loopback clients (embedded dev mode only); absent = 404. */
  devTokens?: DevTokenIssuer;
  /** Asked by GET /readyz (GatewayOptions.readiness); absent = ready unless closing. */
  readiness?: () => Readiness | Promise<Readiness>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

type Route = { method: string; handle: (req: HttpRequest) => Promise<HttpReply> };

export function createHttpApi(deps: HttpApiDeps): (req: HttpRequest) => Promise<HttpReply> {
  const routes = new Map<string, Route>([
    ['/healthz', { method: 'GET', handle: async () => healthz(deps) }],
    ['/readyz', { method: 'GET', handle: () => readyz(deps) }],
    ['/metrics', { method: 'GET', handle: async () => metrics(deps) }],
    ['/v1/send', { method: 'POST', handle: (req) => apiCall(deps, req, 'send', parseSend(req)) }],
    ['/v1/sync', { method: 'GET', handle: (req) => apiCall(deps, req, 'sync', parseHttpSyncQuery(req.query)) }],
  ]);
  const devToken = deps.devTokens && createDevTokenRoute({ issuer: deps.devTokens, origins: deps.origins, logger: deps.logger });
  if (devToken) {
    deps.logger.warn(
      { path: DEV_TOKEN_PATH },
      'dev token route is on: any process on this machine can get a token for any user (SEQLINE_DEV_ROUTES=0 turns it off)',
    );
  }

  return async (req) => {
    const route = routes.get(req.path);
    // HEAD is GET without content (RFC 9110 §9.3.2): same handler, the transport drops the body.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const file = route ? undefined : deps.site?.get(req.path);
    let reply: HttpReply;
    // Same origin only: no preflight, no CORS headers (a foreign page must not read a token).
    if (devToken && req.path === DEV_TOKEN_PATH) {
      reply = await devToken(req);
      deps.metrics.httpRequests.inc({ route: DEV_TOKEN_PATH, status: String(reply.status) });
      return reply;
    }
    if (file) {
      reply = method === 'GET' ? staticReply(file) : errorReply(new BadRequestError(`use GET ${req.path}`), 405, { allow: allowed('GET') });
      deps.metrics.httpRequests.inc({ route: 'static', status: String(reply.status) });
      return reply;
    }
    if (route && method === route.method) reply = await route.handle(req);
    else if (route && req.method === 'OPTIONS') reply = preflight(deps, req, route.method);
    else if (route) reply = errorReply(new BadRequestError(`use ${route.method} ${req.path}`), 405, { allow: allowed(route.method) });
    else if (req.path === deps.wsPath) reply = errorReply(new BadRequestError('WebSocket upgrade required'), 426);
    else if (deps.admin && req.path.startsWith(ADMIN_PREFIX)) reply = await admin(deps.admin, req);
    else reply = errorReply(new NotFoundError(`no route ${req.method} ${req.path}`));
    const label = route ? req.path : deps.admin && req.path.startsWith(ADMIN_PREFIX) ? 'admin' : 'other';
    deps.metrics.httpRequests.inc({ route: label, status: String(reply.status) });
    return withCors(deps, req, reply);
  };
}

function allowed(method: string): string {
  return method === 'GET' ? 'GET, HEAD' : method;
}

/** The admin API reads Authorization itself; a repeated one is refused here first. */
async function admin(handle: (req: HttpRequest) => Promise<HttpReply>, req: HttpRequest): Promise<HttpReply> {
  try {
    singleAuthorization(req);
  } catch (err) {
    return errorReply(err instanceof UnauthorizedError ? err : new UnauthorizedError());
  }
  return handle(req);
}

function parseSend(req: HttpRequest): ParsedArgs<'send'> {
  if (req.bodyTooLarge) return { ok: false, error: new TooLargeError(`request body exceeds ${MAX_FRAME_BYTES} bytes`) };
  return parseHttpSendBody(req.body);
}

async function apiCall<O extends 'send' | 'sync'>(deps: HttpApiDeps, req: HttpRequest, op: O, parsed: ParsedArgs<O>): Promise<HttpReply> {
  deps.metrics.frames.inc({ op });
  let caller: Caller;
  try {
    caller = await authenticate(req, deps.origins, deps.verifyToken);
  } catch (err) {
    return errorReply(toClientError(err, deps.logger, deps.metrics, { op, http: true }));
  }
  if (!parsed.ok) return errorReply(toClientError(parsed.error, deps.logger, deps.metrics, { op, http: true }));
  const context = { op, http: true, tenant: caller.tenant, user: caller.user };
  try {
    if (deps.isClosing()) throw new OverloadedError('server shutting down');
    const allowed = (await deps.rateLimiter?.take(`${caller.tenant}:${caller.user}`)) ?? true;
    if (!allowed) throw new RateLimitedError();
  } catch (err) {
    return errorReply(toClientError(err, deps.logger, deps.metrics, context));
  }
  deps.inFlight.begin();
  const stopTimer = deps.metrics.opDuration.startTimer({ op });
  try {
    const request = { id: 0, op, args: parsed.args } as ClientRequest;
    const result = await dispatch(deps.messaging, caller, request);
    return { status: 200, headers: JSON_HEADERS, body: encodeHttpResult(result) };
  } catch (err) {
    return errorReply(toClientError(err, deps.logger, deps.metrics, context));
  } finally {
    stopTimer();
    deps.inFlight.end();
  }
}

function healthz(deps: HttpApiDeps): HttpReply {
  if (deps.isClosing()) return { status: 503, headers: JSON_HEADERS, body: JSON.stringify({ ok: false, closing: true }) };
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ ok: true }) };
}

async function readyz(deps: HttpApiDeps): Promise<HttpReply> {
  const notReady = (body: object): HttpReply => ({ status: 503, headers: JSON_HEADERS, body: JSON.stringify({ ok: false, ...body }) });
  if (deps.isClosing()) return notReady({ closing: true });
  let answer: Readiness;
  try {
    answer = deps.readiness ? await deps.readiness() : { ready: true };
  } catch (err) {
    deps.logger.warn({ err }, 'readiness check failed');
    return notReady({});
  }
  if (deps.isClosing()) return notReady({ closing: true });
  if (!answer.ready) return notReady(answer.detail ?? {});
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ ok: true, ...answer.detail }) };
}

async function metrics(deps: HttpApiDeps): Promise<HttpReply> {
  const text = await deps.metrics.registry.metrics();
  return { status: 200, headers: { 'content-type': deps.metrics.registry.contentType }, body: text };
}

function errorReply(error: SeqlineError, status?: number, headers?: Record<string, string>): HttpReply {
  return { status: status ?? httpStatusOf(error.code), headers: { ...JSON_HEADERS, ...headers }, body: encodeHttpError(error) };
}

/** Browsers ask before a cross-origin POST with Authorization; only allowed origins get a yes. */
function preflight(deps: HttpApiDeps, req: HttpRequest, method: string): HttpReply {
  const origin = req.header('origin');
  if (origin === undefined || !deps.origins.allows(origin, req.header('host'))) return { status: 403, body: '' };
  return {
    status: 204,
    headers: {
      'access-control-allow-methods': `${method}, OPTIONS`,
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-max-age': '600',
    },
    body: '',
  };
}

function withCors(deps: HttpApiDeps, req: HttpRequest, reply: HttpReply): HttpReply {
  const origin = req.header('origin');
  if (origin === undefined || !deps.origins.allows(origin, req.header('host'))) return reply;
  return { ...reply, headers: { ...reply.headers, 'access-control-allow-origin': origin, vary: 'Origin' } };
}
