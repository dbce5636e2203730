/**
 * The admin HTTP API under `/v1/admin/`, served by the same listener as the client API and
 * protected by an admin token (role "admin"): none or invalid → 401, a user token → 403.
 * `seqline-admin` talks to this, so every change is validated by the running system and
 * picked up by every process (docs/admin.md). Same error bodies and statuses as /v1/send.
 */
import {
  BadRequestError,
  ID_PATTERN,
  LIMIT_KEYS,
  NotFoundError,
  OverloadedError,
  TooLargeError,
  UnauthorizedError,
  type DeviceSession,
  type Limits,
  type Logger,
  type SeqlineError,
  type TierThresholds,
} from '@seqline/core';
import type { AdminService } from '@seqline/messaging';
import { encodeHttpError, encodeHttpResult, httpStatusOf, MAX_FRAME_BYTES, type AdminTokenVerifier } from '@seqline/protocol';
import { checkOrigin } from './auth.ts';
import type { OriginPolicy } from './origin-policy.ts';
import { toClientError } from './errors.ts';
import type { InFlight } from './in-flight.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { HttpReply, HttpRequest } from './transport/transport.ts';

export const ADMIN_PREFIX = '/v1/admin/';

export interface AdminApiOptions {
  service: AdminService;
  /** createAdminTokenVerifier from @seqline/protocol. */
  verifyAdminToken: AdminTokenVerifier;
}

export interface AdminApiDeps extends AdminApiOptions {
  origins: OriginPolicy;
  logger: Logger;
  metrics: GatewayMetrics;
  inFlight: InFlight;
  isClosing(): boolean;
  /** A user's live sessions on every gateway (the device bus). */
  devices?: (tenant: string, user: string) => Promise<DeviceSession[]>;
}

type Params = Record<string, string>;
interface AdminCall {
  params: Params;
  query: URLSearchParams;
  body: () => unknown;
  admin: string;
}
interface AdminRoute {
  method: string;
  path: string[];
  handle: (call: AdminCall) => Promise<object> | object;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const TIER_KEYS: readonly (keyof TierThresholds)[] = ['smallBelow', 'largeBelow', 'maxMembers', 'hysteresis'];

export function createAdminApi(deps: AdminApiDeps): (req: HttpRequest) => Promise<HttpReply> {
  const { service } = deps;
  const routes: AdminRoute[] = [
    { method: 'GET', path: ['tiers'], handle: () => service.tiersShow() },
    { method: 'PUT', path: ['tiers'], handle: (c) => audited(deps, c, 'tiers set', service.tiersSet(numbersPatch(c.body(), TIER_KEYS))) },
    { method: 'GET', path: ['limits'], handle: () => service.limitsShow() },
    {
      method: 'PUT',
      path: ['limits'],
      handle: (c) => audited(deps, c, 'limits set', service.limitsSet(numbersPatch<Limits>(c.body(), LIMIT_KEYS))),
    },
    { method: 'GET', path: ['queues'], handle: () => service.queueCounters() },
    // Hook settings of one tenant: answers are redacted (a secret is write-only).
    { method: 'GET', path: ['hooks', ':tenant'], handle: (c) => service.hooks.show(param(c, 'tenant')) },
    {
      method: 'PUT',
      path: ['hooks', ':tenant'],
      handle: (c) => audited(deps, c, 'hooks set', service.hooks.set(param(c, 'tenant'), c.body())),
    },
    {
      method: 'GET',
      path: ['groups', ':tenant', ':id'],
      handle: (c) =>
        service.groupShow(param(c, 'tenant'), param(c, 'id'), {
          memberLimit: queryInt(c.query, 'memberLimit', 100),
          ...(c.query.has('membersAfter') ? { membersAfter: c.query.get('membersAfter') ?? '' } : {}),
        }),
    },
    {
      method: 'GET',
      path: ['inbox', ':tenant', ':user'],
      handle: (c) => service.inbox(param(c, 'tenant'), param(c, 'user'), queryInt(c.query, 'after', 0), queryInt(c.query, 'limit', 100)),
    },
    {
      method: 'GET',
      path: ['inbox', ':tenant', ':user', 'conversations'],
      handle: (c) => service.inboxConversations(param(c, 'tenant'), param(c, 'user')),
    },
    {
      method: 'POST',
      path: ['conversations', ':tenant', ':user', 'rebuild'],
      handle: (c) => audited(deps, c, 'conversations rebuild', service.rebuildConversations(param(c, 'tenant'), param(c, 'user'))),
    },
    { method: 'GET', path: ['devices', ':tenant', ':user'], handle: (c) => devicesOf(deps, param(c, 'tenant'), param(c, 'user')) },
    {
      method: 'GET',
      path: ['jobs'],
      handle: (c) =>
        service.jobs.pending({
          ...(c.query.has('queue') ? { queue: c.query.get('queue') ?? '' } : {}),
          limit: queryInt(c.query, 'limit', 100),
        }),
    },
    { method: 'GET', path: ['deadletters'], handle: async () => ({ deadLetters: await service.deadLetters() }) },
    {
      method: 'POST',
      path: ['deadletters', 'replay'],
      handle: (c) => {
        const body = c.body();
        if (!isObject(body) || body['all'] !== true)
          throw new BadRequestError('body must be {"all": true}; replay one with POST deadletters/:id/replay');
        return audited(deps, c, 'replay all', service.replay('all'));
      },
    },
    {
      method: 'POST',
      path: ['deadletters', ':id', 'replay'],
      handle: async (c) => {
        const result = await audited(deps, c, 'replay', service.replay({ id: param(c, 'id') }));
        if (result.replayed.length === 0) throw new NotFoundError(`no dead letter ${param(c, 'id')}`);
        return result;
      },
    },
  ];

  return async (req) => {
    try {
      checkOrigin(req, deps.origins);
      const admin = await authenticateAdmin(req, deps.verifyAdminToken);
      const segments = splitPath(req.path.slice(ADMIN_PREFIX.length));
      const matching = routes.flatMap((route) => {
        const params = match(route.path, segments);
        return params === null ? [] : [{ route, params }];
      });
      const found = matching.find((m) => m.route.method === req.method);
      if (found === undefined) {
        if (matching.length === 0) throw new NotFoundError(`no admin route ${req.method} ${req.path}`);
        const allow = [...new Set(matching.map((m) => m.route.method))].join(', ');
        return errorReply(new BadRequestError(`use ${allow} ${req.path}`), 405, { allow });
      }
      if (deps.isClosing()) throw new OverloadedError('server shutting down');
      const call: AdminCall = { params: found.params, query: new URLSearchParams(req.query), body: () => jsonBody(req), admin };
      return await run(deps, () => found.route.handle(call));
    } catch (err) {
      return errorReply(toClientError(err, deps.logger, deps.metrics, { op: 'admin', http: true, path: req.path }));
    }
  };
}

async function devicesOf(deps: AdminApiDeps, tenant: string, user: string): Promise<{ devices: DeviceSession[] }> {
  if (!ID_PATTERN.test(tenant) || !ID_PATTERN.test(user)) throw new BadRequestError('tenant and user must be ids');
  if (deps.devices === undefined) throw new NotFoundError('devices are not served here');
  return { devices: await deps.devices(tenant, user) };
}

async function run(deps: AdminApiDeps, handle: () => Promise<object> | object): Promise<HttpReply> {
  deps.inFlight.begin();
  try {
    return { status: 200, headers: JSON_HEADERS, body: encodeHttpResult(await handle()) };
  } finally {
    deps.inFlight.end();
  }
}

/** Only the Authorization header: an admin token in a URL ends up in proxy and shell logs. */
async function authenticateAdmin(req: HttpRequest, verify: AdminTokenVerifier): Promise<string> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
  if (!match?.[1]) throw new UnauthorizedError('missing admin token (Authorization: Bearer …)');
  const claims = await verify(match[1]);
  return claims.name;
}

async function audited<T>(deps: AdminApiDeps, call: AdminCall, what: string, result: Promise<T>): Promise<T> {
  const value = await result;
  deps.logger.info({ admin: call.admin, params: call.params }, `admin: ${what}`);
  return value;
}

function splitPath(rest: string): string[] {
  try {
    return rest
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    throw new BadRequestError('malformed percent-encoding in path');
  }
}

function match(pattern: string[], segments: string[]): Params | null {
  if (pattern.length !== segments.length) return null;
  const params: Params = {};
  for (const [i, part] of pattern.entries()) {
    const segment = segments[i] ?? '';
    if (part.startsWith(':')) params[part.slice(1)] = segment;
    else if (part !== segment) return null;
  }
  return params;
}

function param(call: AdminCall, name: string): string {
  const value = call.params[name];
  if (value === undefined) throw new BadRequestError(`missing ${name}`);
  return value;
}

function queryInt(query: URLSearchParams, name: string, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,16}$/.test(raw)) throw new BadRequestError(`${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

function jsonBody(req: HttpRequest): unknown {
  if (req.bodyTooLarge) throw new TooLargeError(`request body exceeds ${MAX_FRAME_BYTES} bytes`);
  try {
    return JSON.parse(req.body.toString('utf8'));
  } catch {
    throw new BadRequestError('request body is not valid JSON');
  }
}

/** A JSON object whose every field is one of `keys` with a number value. */
function numbersPatch<T extends object>(body: unknown, keys: readonly (keyof T)[]): Partial<T> {
  if (!isObject(body)) throw new BadRequestError('request body must be a JSON object');
  const allowed = new Set<string>(keys.map(String));
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!allowed.has(key)) throw new BadRequestError(`unknown field ${key}; expected any of ${[...allowed].join(', ')}`);
    if (typeof value !== 'number') throw new BadRequestError(`${key} must be a number`);
    out[key] = value;
  }
  return out as Partial<T>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function errorReply(error: SeqlineError, status?: number, headers?: Record<string, string>): HttpReply {
  return { status: status ?? httpStatusOf(error.code), headers: { ...JSON_HEADERS, ...headers }, body: encodeHttpError(error) };
}
