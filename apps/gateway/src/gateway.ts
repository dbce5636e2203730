/** createGateway: WebSocket + HTTP front door over a Messaging implementation. */
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  DEFAULT_LIMITS,
  InternalError,
  OverloadedError,
  RateLimitedError,
  toSeqlineError,
  UnauthorizedError,
  type Logger,
  type SeqlineError,
} from '@seqline/core';
import type { Caller, Messaging } from '@seqline/messaging';
import { encodeHttpError, httpStatusOf, MAX_FRAME_BYTES } from '@seqline/protocol';
import { createAdminApi, type AdminApiOptions } from './admin-api.ts';
import { authenticate, originPolicy, type VerifyToken } from './auth.ts';
import { ClientSession, expiryOf, type SessionLimits, type SocketIdentity } from './client-session.ts';
import type { DevTokenIssuer } from './dev-token.ts';
import { createHttpApi } from './http-api.ts';
import type { StaticSite } from './static-site.ts';
import { InFlight } from './in-flight.ts';
import { TurnBatch } from './turn-batch.ts';
import { GatewayMetrics } from './metrics.ts';
import { Holds, RefusalHold, TokenBucketRateLimiter, type RateLimiter } from './rate-limit.ts';
import { UserSockets } from './user-sockets.ts';
import { createTransport } from './transport/select.ts';
import type { UwsLoadResult } from './transport/uws-loader.ts';
import { CLOSE_CODES, type HttpReply, type TransportChoiceName, type TransportName, type UpgradeDecision } from './transport/transport.ts';

export const WS_PATH = '/v1/ws';

export interface GatewayOptions {
  port: number;
  /** Default "0.0.0.0". */
  host?: string;
  messaging: Messaging;
  verifyToken: VerifyToken;
  logger: Logger;
  /** Browser origins allowed (requests with an Origin header). Undefined = any; "*" = any. */
  allowedOrigins?: string[];
  /** Per-user token bucket (default 100/s, burst 200); false disables. Ignored when rateLimiter is given. */
  rateLimit?: { perSecond: number; burst: number } | false;
  /** A shared limiter (e.g. Redis) instead of the in-process token buckets. */
  rateLimiter?: RateLimiter;
  /** Unsent bytes per socket above which it is closed (default 1 MiB). */
  maxBackpressureBytes?: number;
  /** Undecodable frames in a row before a socket is closed (default 20). */
  maxConsecutiveBadFrames?: number;
  /** Concurrent requests per socket before OVERLOADED (default 256). */
  maxInFlightPerConnection?: number;
  /**
   * Refusals a socket may collect, refilled at `perSecond`: an undecodable frame spends its cost
   * (1 + bytes/4096), a RATE_LIMITED one 1; past it the socket is closed with 1008 (default burst 64, 8/s).
   */
  refusedFrames?: { burst: number; perSecond: number };
  /** After a user is refused by the rate limiter, refuse them without asking it for this long (default 50 ms). */
  rateLimitHoldMs?: number;
  /**
   * After a socket is closed for too many refused frames, its user's frames and upgrades on this
   * gateway are refused (RATE_LIMITED, HTTP 429) for this long (default 5 000 ms): reconnecting
   * in a loop buys the sender nothing.
   */
  abuseHoldMs?: number;
  /**
   * Open sockets of one user on this gateway; a new one past it closes the user's oldest (4429).
   * Read at every accept. Default: the live `perUserSockets` limit of the admin service's
   * settings when `admin` is given, else DEFAULT_LIMITS.perUserSockets (20).
   */
  maxSocketsPerUser?: number | (() => number);
  /** WebSocket messages above this are not answered: the socket is closed with 1009 (default 256 KiB). */
  maxPayloadBytes?: number;
  /** 8–960 s, default 120 (pings keep healthy sockets alive; uWS aborts the process outside this range). */
  idleTimeoutSeconds?: number;
  /** Default "auto": native uWebSockets.js where its binary loads, else the ws package (logged). */
  transport?: TransportChoiceName;
  /** Prometheus registry to register on (default: a new one, served at /metrics). */
  metrics?: Registry;
  /**
   * Also export the Node process's own metrics (event-loop lag, GC pauses, heap, CPU: prom-client's
   * defaults) on that registry. A process's entry point sets it, once; default off, so that
   * several gateways in one process (tests) do not each start the collectors.
   */
  processMetrics?: boolean;
  /** How long close() waits for in-flight requests before closing sockets (default 5 s). */
  shutdownGraceMs?: number;
  /** Mounts the admin API under /v1/admin/ (admin-token protected); absent = no admin routes. */
  admin?: AdminApiOptions;
  /** A static site (the demo page, loadStaticSite) served at its paths by GET/HEAD; absent = none. */
  site?: StaticSite;
  /** POST /dev/token for loopback clients only (embedded dev mode; never the distributed gateway). */
  devTokens?: DevTokenIssuer;
  /** Test hook: replaces the native uWS loader. */
  loadUws?: () => UwsLoadResult;
}

export interface Gateway {
  /** The bound port (the real one when options.port was 0). */
  readonly port: number;
  readonly host: string;
  readonly transport: TransportName;
  /** True when running on the native uWebSockets.js binary. */
  readonly native: boolean;
  readonly metrics: Registry;
  connectionCount(): number;
  /** Open sockets of one user on this gateway. */
  socketCount(tenant: string, user: string): number;
  /** Stops accepting, lets in-flight requests answer (bounded), closes sockets with 1001. */
  close(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  validateOptions(options);
  const logger = options.logger.child({ component: 'gateway' });
  const registry = options.metrics ?? new Registry();
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });
  const metrics = new GatewayMetrics(registry);
  const origins = originPolicy(options.allowedOrigins);
  const inFlight = new InFlight();
  // One per gateway: the requests admitted in a turn are served together (see TurnBatch).
  const turn = new TurnBatch((err) => logger.error({ err }, 'serving a queued request failed'));
  const sessions = new UserSockets<ClientSession>();
  const baseLimiter =
    options.rateLimiter ??
    (options.rateLimit === false ? null : new TokenBucketRateLimiter(options.rateLimit ?? { perSecond: 100, burst: 200 }));
  const rateLimiter = baseLimiter && new RefusalHold(baseLimiter, options.rateLimitHoldMs ?? 50);
  const socketCap = socketCapOf(options);
  const abusers = new Holds();
  const abuseHoldMs = options.abuseHoldMs ?? 5000;
  const maxBackpressureBytes = options.maxBackpressureBytes ?? 1024 * 1024;
  const limits: SessionLimits = {
    maxBackpressureBytes,
    maxConsecutiveBadFrames: options.maxConsecutiveBadFrames ?? 20,
    maxInFlightPerConnection: options.maxInFlightPerConnection ?? 256,
    refusedFrames: options.refusedFrames ?? { burst: 64, perSecond: 8 },
  };
  let closing = false;
  const isClosing = () => closing;

  const transport = createTransport<SocketIdentity>(
    { logger, ...pick(options, 'transport', 'loadUws') },
    {
      wsPath: WS_PATH,
      upgrade(req): UpgradeDecision<SocketIdentity> | Promise<UpgradeDecision<SocketIdentity>> {
        if (closing) return { accept: false, reply: refusal(new OverloadedError('server shutting down')) };
        const refuse = (err: unknown): UpgradeDecision<SocketIdentity> => {
          const error = toSeqlineError(err);
          // Never log the token or the URL (its query may hold the token).
          if (error.code === 'INTERNAL') logger.error({ err }, 'token verification failed');
          else logger.debug({ code: error.code, reason: error.message }, 'upgrade refused');
          metrics.errors.inc({ code: error.code });
          return { accept: false, reply: refusal(error.code === 'INTERNAL' ? new InternalError() : error) };
        };
        // The verifier's expiry of this upgrade's token (authenticate() hands back the caller only).
        let expiresAt: number | null = null;
        const verify: VerifyToken = (token) => {
          const claims = options.verifyToken(token);
          const note = <C extends object>(c: C): C => {
            expiresAt = expiryOf(c);
            return c;
          };
          return claims instanceof Promise ? claims.then(note) : note(claims);
        };
        const accept = (caller: Caller): UpgradeDecision<SocketIdentity> => {
          // The verifier tolerates clock skew; a socket is not opened past its token's own exp.
          if (expiresAt !== null && expiresAt <= Date.now()) return refuse(new UnauthorizedError('token expired'));
          if (abusers.isHeld(`${caller.tenant}:${caller.user}`)) {
            return refuse(new RateLimitedError('too many refused frames; reconnect later'));
          }
          return { accept: true, session: { caller, expiresAt } };
        };
        try {
          const caller = authenticate(req, origins, verify);
          return caller instanceof Promise ? caller.then(accept, refuse) : accept(caller);
        } catch (err) {
          return refuse(err);
        }
      },
      open(conn, identity) {
        const session = new ClientSession(conn, identity, {
          messaging: options.messaging,
          logger,
          metrics,
          rateLimiter,
          limits,
          inFlight,
          turn,
          isClosing,
          verifyToken: options.verifyToken,
          onClosed: (s) => sessions.delete(s),
          onAbuse: (s) => {
            // Its other sockets' frames and its upgrades: reconnecting in a loop buys nothing.
            rateLimiter?.hold(s.rateKey, abuseHoldMs);
            abusers.hold(s.rateKey, abuseHoldMs);
          },
        });
        if (conn.isOpen) {
          // Over the cap the oldest go: a phone that changed networks leaves a dead socket behind.
          for (const oldest of sessions.add(session, socketCap())) {
            oldest.close(CLOSE_CODES.tooManySockets, 'too many sockets for this user', 'too_many_sockets');
          }
        }
        return session;
      },
      http: createHttpApi({
        messaging: options.messaging,
        verifyToken: options.verifyToken,
        origins,
        logger,
        metrics,
        rateLimiter,
        inFlight,
        wsPath: WS_PATH,
        isClosing,
        ...pick(options, 'site', 'devTokens'),
        ...(options.admin ? { admin: createAdminApi({ ...options.admin, origins, logger, metrics, inFlight, isClosing }) } : {}),
      }),
    },
    {
      maxPayloadBytes: Math.max(options.maxPayloadBytes ?? 256 * 1024, MAX_FRAME_BYTES + 1024),
      maxHttpBodyBytes: MAX_FRAME_BYTES,
      maxBackpressureBytes,
      idleTimeoutSeconds: options.idleTimeoutSeconds ?? 120,
    },
  );

  const host = options.host ?? '0.0.0.0';
  const port = await transport.listen(host, options.port);
  logger.info({ host, port, transport: transport.name, native: transport.native }, 'gateway listening');

  let closed: Promise<void> | null = null;
  return {
    port,
    host,
    transport: transport.name,
    native: transport.native,
    metrics: registry,
    connectionCount: () => sessions.size,
    socketCount: (tenant, user) => sessions.countOf({ tenant, user }),
    close() {
      closed ??= (async () => {
        closing = true;
        transport.stopListening();
        const drained = await inFlight.idle(options.shutdownGraceMs ?? 5000);
        if (!drained) logger.warn({ inFlight: inFlight.size }, 'closing with requests still in flight');
        for (const session of sessions.all()) session.close(CLOSE_CODES.goingAway, 'server shutting down');
        await transport.close();
        logger.info({ port }, 'gateway closed');
      })();
      return closed;
    },
  };
}

/** The per-user socket cap in force, read at each accept (live when the admin settings are given). */
function socketCapOf(options: GatewayOptions): () => number {
  const configured = options.maxSocketsPerUser;
  if (typeof configured === 'number') return () => configured;
  if (configured !== undefined) return configured;
  const service = options.admin?.service;
  if (service !== undefined) return () => service.limitsShow().limits.perUserSockets;
  return () => DEFAULT_LIMITS.perUserSockets;
}

/** Bad numbers are refused here: some would abort the process inside native uWS. */
function validateOptions(options: GatewayOptions): void {
  const check = (name: string, value: number | undefined, min: number, max: number) => {
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) {
      throw new RangeError(`gateway option ${name} must be an integer in [${min}, ${max}], got ${value}`);
    }
  };
  check('port', options.port, 0, 65_535);
  check('idleTimeoutSeconds', options.idleTimeoutSeconds, 8, 960);
  check('maxBackpressureBytes', options.maxBackpressureBytes, 1024, 2 ** 31 - 1);
  check('maxPayloadBytes', options.maxPayloadBytes, 1024, 2 ** 31 - 1);
  check('maxConsecutiveBadFrames', options.maxConsecutiveBadFrames, 0, Number.MAX_SAFE_INTEGER);
  check('maxInFlightPerConnection', options.maxInFlightPerConnection, 1, Number.MAX_SAFE_INTEGER);
  check('shutdownGraceMs', options.shutdownGraceMs, 0, Number.MAX_SAFE_INTEGER);
  check('rateLimitHoldMs', options.rateLimitHoldMs, 0, 60_000);
  check('abuseHoldMs', options.abuseHoldMs, 0, 3_600_000);
  if (typeof options.maxSocketsPerUser === 'number') check('maxSocketsPerUser', options.maxSocketsPerUser, 1, Number.MAX_SAFE_INTEGER);
  const refused = options.refusedFrames;
  if (refused !== undefined && !(refused.burst >= 1 && refused.perSecond > 0)) {
    throw new RangeError('gateway option refusedFrames needs burst >= 1 and perSecond > 0');
  }
}

function refusal(error: SeqlineError): HttpReply {
  return { status: httpStatusOf(error.code), headers: { 'content-type': 'application/json' }, body: encodeHttpError(error) };
}

function pick<T extends object, K extends keyof T>(source: T, ...keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
