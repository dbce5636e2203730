/** What createGateway takes, and the checks of it made before anything starts. */
import type { Registry } from 'prom-client';
import { DEFAULT_LIMITS, type DeviceBusFactory, type HoldStore, type Logger, type LoginPolicy } from '@seqline/core';
import type { Messaging } from '@seqline/messaging';
import type { AdminApiOptions } from './admin-api.ts';
import type { VerifyToken } from './auth.ts';
import type { DevTokenIssuer } from './dev-token.ts';
import type { AllowedOrigins } from './origin-policy.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { StaticSite } from './static-site.ts';
import type { TransportChoiceName } from './transport/transport.ts';
import type { UwsLoadResult } from './transport/uws-loader.ts';

/** A readiness answer; `detail` is added to the `/readyz` body (counts, never secrets). */
export interface Readiness {
  ready: boolean;
  detail?: Record<string, number | boolean>;
}

export interface GatewayOptions {
  port: number;
  /** Default "0.0.0.0". */
  host?: string;
  messaging: Messaging;
  verifyToken: VerifyToken;
  logger: Logger;
  /** Browser origins allowed (requests with an Origin header): see AllowedOrigins. Undefined = any; "*" = any. */
  allowedOrigins?: AllowedOrigins;
  /** Per-user token bucket (default 100/s, burst 200); false disables. Ignored when rateLimiter is given. */
  rateLimit?: { perSecond: number; burst: number } | false;
  /** A shared limiter (e.g. Redis) instead of the in-process token buckets. */
  rateLimiter?: RateLimiter;
  /** Unsent bytes per socket above which it is closed (default 1 MiB). */
  maxBackpressureBytes?: number;
  /** Undecodable frames in a row tolerated (default 20): one more closes the socket (1008) and holds its user. */
  maxConsecutiveBadFrames?: number;
  /** Concurrent requests per socket before OVERLOADED (default 256). */
  maxInFlightPerConnection?: number;
  /**
   * The allowance of refusal units a socket may spend, refilled at `perSecond`: an undecodable
   * frame spends its cost (1 + bytes/4096), a RATE_LIMITED one 1; past it the socket is closed
   * (1008) and its user held (default burst 64, 8/s).
   */
  refusalAllowance?: { burst: number; perSecond: number };
  /** After the rate limiter refuses a user, answer their frames from memory for this long without asking it (default 50 ms). */
  rateRefusalCacheMs?: number;
  /**
   * The hold: after the refusal rule closes a socket (a bad-frame streak or a spent allowance), its
   * user's frames, HTTP calls and upgrades are refused (RATE_LIMITED, HTTP 429) for this long
   * (default 5 000 ms; 0: closed, not held): reconnecting in a loop buys the sender nothing.
   */
  holdMs?: number;
  /** Where holds are shared with the other gateways (RedisHoldStore); absent: this gateway alone. */
  holdStore?: HoldStore;
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
  /**
   * Listen on a port other threads of this process listen on too (the kernel spreads the
   * connections): node:http's `reusePort` (Node >= 22.12); native uWS shares it on Linux anyway.
   */
  reusePort?: boolean;
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
  /**
   * What `GET /readyz` asks before answering 200: whether sends can be served now (a distributed
   * gateway probes the shard owners, ShardReadiness). Absent: ready once listening (the embedded
   * server's owner serves before its gateway listens). Never ready while closing.
   */
  readiness?: () => Readiness | Promise<Readiness>;
  /** This gateway's name in `seqline-admin devices` (default: a random one). */
  gatewayId?: string;
  /** The live login policy of a tenant (the hooks settings); default 'all' for every tenant. */
  loginPolicyOf?: (tenant: string) => LoginPolicy;
  /** Carries logins to the sessions held by other gateways (default: this gateway alone). */
  deviceBus?: DeviceBusFactory;
  /** How long a displaced session's in-flight requests may take before it is told (default 5 000 ms). */
  kickDrainMs?: number;
  /** Test hook: replaces the native uWS loader. */
  loadUws?: () => UwsLoadResult;
}

/** The per-user socket cap in force, read at each accept (live when the admin settings are given). */
export function socketCapOf(options: GatewayOptions): () => number {
  const configured = options.maxSocketsPerUser;
  if (typeof configured === 'number') return () => configured;
  if (configured !== undefined) return configured;
  const service = options.admin?.service;
  if (service !== undefined) return () => service.limitsShow().limits.perUserSockets;
  return () => DEFAULT_LIMITS.perUserSockets;
}

/** Bad numbers are refused here: some would abort the process inside native uWS. */
export function validateOptions(options: GatewayOptions): void {
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
  check('rateRefusalCacheMs', options.rateRefusalCacheMs, 0, 60_000);
  check('holdMs', options.holdMs, 0, 3_600_000);
  if (typeof options.maxSocketsPerUser === 'number') check('maxSocketsPerUser', options.maxSocketsPerUser, 1, Number.MAX_SAFE_INTEGER);
  const allowance = options.refusalAllowance;
  if (allowance !== undefined && !(allowance.burst >= 1 && allowance.perSecond > 0)) {
    throw new RangeError('gateway option refusalAllowance needs burst >= 1 and perSecond > 0');
  }
}
