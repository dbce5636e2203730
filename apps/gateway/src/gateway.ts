/** createGateway: WebSocket + HTTP front door over a Messaging implementation. */
import { randomUUID } from 'node:crypto';
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  InternalError,
  loginClock,
  OverloadedError,
  RateLimitedError,
  toSeqlineError,
  UnauthorizedError,
  type SeqlineError,
} from '@seqline/core';
import type { Caller } from '@seqline/messaging';
import { encodeHttpError, httpStatusOf, MAX_FRAME_BYTES } from '@seqline/protocol';
import { createAdminApi } from './admin-api.ts';
import { authenticate, socketDevice, type VerifyToken } from './auth.ts';
import { originPolicy } from './origin-policy.ts';
import { GatewayDevices } from './devices.ts';
import { ClientSession, expiryOf, type SessionLimits, type SocketIdentity } from './client-session.ts';
import { createHttpApi } from './http-api.ts';
import { InFlight } from './in-flight.ts';
import { TurnBatch } from './turn-batch.ts';
import { socketCapOf, validateOptions, type GatewayOptions } from './gateway-options.ts';
import { GatewayMetrics } from './metrics.ts';
import { RateRefusalCache, TokenBucketRateLimiter } from './rate-limit.ts';
import { HeldUsersFirst, UserHolds } from './user-holds.ts';
import { UserSockets } from './user-sockets.ts';
import { createTransport } from './transport/select.ts';
import { CLOSE_CODES, type HttpReply, type TransportName, type UpgradeDecision } from './transport/transport.ts';

export const WS_PATH = '/v1/ws';

export type { GatewayOptions, Readiness } from './gateway-options.ts';

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
  /**
   * Stops accepting, lets in-flight requests answer (bounded by shutdownGraceMs), closes sockets
   * with 1001, and resolves once every request has finished, answered or not.
   */
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
  const holds = new UserHolds({ shared: options.holdStore });
  // Held users first, then the rate (its refusals cached briefly): every frame and HTTP call asks this.
  const rateLimiter = new HeldUsersFirst(holds, baseLimiter && new RateRefusalCache(baseLimiter, options.rateRefusalCacheMs ?? 50));
  const socketCap = socketCapOf(options);
  const maxBackpressureBytes = options.maxBackpressureBytes ?? 1024 * 1024;
  const limits: SessionLimits = {
    maxBackpressureBytes,
    maxConsecutiveBadFrames: options.maxConsecutiveBadFrames ?? 20,
    maxInFlightPerConnection: options.maxInFlightPerConnection ?? 256,
    refusalAllowance: options.refusalAllowance ?? { burst: 64, perSecond: 8 },
    holdMs: options.holdMs ?? 5000,
  };
  let closing = false;
  const isClosing = () => closing;
  const devices = new GatewayDevices({
    gateway: options.gatewayId ?? `gw-${randomUUID().slice(0, 8)}`,
    loginPolicyOf: options.loginPolicyOf ?? (() => 'all'),
    drainMs: options.kickDrainMs ?? 5000,
    logger,
    onDisplaced: (outcome) => metrics.displacements.inc({ outcome }),
    ...(options.deviceBus ? { bus: options.deviceBus } : {}),
  });
  const acceptedAt = loginClock(Date.now);

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
        let claims: object = {};
        const verify: VerifyToken = (token) => {
          const verified = options.verifyToken(token);
          const note = <C extends object>(c: C): C => {
            expiresAt = expiryOf(c);
            claims = c;
            return c;
          };
          return verified instanceof Promise ? verified.then(note) : note(verified);
        };
        const accept = (caller: Caller): UpgradeDecision<SocketIdentity> => {
          // The verifier tolerates clock skew; a socket is not opened past its token's own exp.
          if (expiresAt !== null && expiresAt <= Date.now()) return refuse(new UnauthorizedError('token expired'));
          // What this gateway knows, synchronously (uWS loses sockets upgraded after an await);
          // another gateway's hold is learnt once the socket is open.
          if (holds.isHeld(`${caller.tenant}:${caller.user}`)) {
            return refuse(new RateLimitedError('held after too many refused frames; reconnect later'));
          }
          try {
            return { accept: true, session: { caller, expiresAt, device: socketDevice(req, claims) } };
          } catch (err) {
            return refuse(err);
          }
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
          acceptedAt,
          onClosed: (s) => {
            sessions.delete(s);
            devices.closed(s);
          },
          // Its other sockets' frames, its HTTP calls and its upgrades: reconnecting in a loop buys nothing.
          onHold: (s, ms) => holds.hold(s.rateKey, ms),
        });
        if (conn.isOpen) {
          // Nothing is served before the shared store says whether another gateway holds this user.
          if (holds.isShared) {
            session.serveAfter(holds.learn(session.rateKey).then((held) => (held ? session.refuseHeld() : undefined)));
          }
          devices.opened(session);
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
        ...pick(options, 'site', 'devTokens', 'readiness'),
        ...(options.admin
          ? {
              admin: createAdminApi({
                ...options.admin,
                origins,
                logger,
                metrics,
                inFlight,
                isClosing,
                devices: (t, u) => devices.bus.list(t, u),
              }),
            }
          : {}),
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
  const port = await transport.listen(host, options.port, { reusePort: options.reusePort === true });
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
        if (!drained) logger.warn({ inFlight: inFlight.size }, 'closing sockets with requests still in flight; waiting for them to finish');
        for (const session of sessions.all()) session.close(CLOSE_CODES.goingAway, 'server shutting down');
        await transport.close();
        // Past the grace the sockets close, but a request still running writes through the
        // messaging service the caller closes next: give it a second grace to finish. One stuck
        // for longer is abandoned; it was never answered, so its client resends (every op is
        // idempotent by its appinfo or id) and nothing acknowledged is lost.
        if (!(await inFlight.idle(options.shutdownGraceMs ?? 5000))) {
          logger.warn({ inFlight: inFlight.size }, 'requests still unfinished after the grace; closing without them');
        }
        await devices.bus.close();
        logger.info({ port }, 'gateway closed');
      })();
      return closed;
    },
  };
}

function refusal(error: SeqlineError): HttpReply {
  return { status: httpStatusOf(error.code), headers: { 'content-type': 'application/json' }, body: encodeHttpError(error) };
}

function pick<T extends object, K extends keyof T>(source: T, ...keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
