/** What a ClientSession is given: its limits, who it is, and the gateway's services. */
import type { Clock, Logger } from '@seqline/core';
import type { Caller, Messaging } from '@seqline/messaging';
import type { SocketDevice, VerifyToken } from './auth.ts';
import type { RefusalBudgetOptions } from './frame-charge.ts';
import type { InFlight } from './in-flight.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { TurnBatch } from './turn-batch.ts';

export interface SessionLimits {
  /** A socket whose unsent bytes exceed this is closed; the client reconnects and syncs. */
  maxBackpressureBytes: number;
  /** Undecodable frames in a row tolerated before the socket is closed. */
  maxConsecutiveBadFrames: number;
  /** Requests of one socket served at once; more are refused with OVERLOADED. */
  maxInFlightPerConnection: number;
  /** Refusals (undecodable frames by size, RATE_LIMITED ones) allowed over time; past it the socket is closed (1008). */
  refusedFrames: RefusalBudgetOptions;
}

/** Who the socket is and until when (epoch ms; null = the verifier reports no expiry). */
export interface SocketIdentity {
  caller: Caller;
  expiresAt: number | null;
  /** v1.1: the device it named (token or URL), for the login policy. */
  device: SocketDevice;
}

/** `S` is the session type (ClientSession), a parameter so this file does not import it back. */
export interface SessionDeps<S = unknown> {
  messaging: Messaging;
  logger: Logger;
  metrics: GatewayMetrics;
  rateLimiter: RateLimiter | null;
  limits: SessionLimits;
  inFlight: InFlight;
  /** Where requests admitted synchronously wait for the end of the turn (see TurnBatch). */
  turn: TurnBatch;
  /** Checks the token of an `auth` renewal. */
  verifyToken: VerifyToken;
  clock?: Clock;
  /** When a socket was accepted (DeviceSession.since); strictly increasing on a gateway (core's loginClock). */
  acceptedAt: () => number;
  isClosing(): boolean;
  /** Called when the socket is closed for spending its refusal allowance (the gateway holds its user off). */
  onAbuse(session: S): void;
  /** Called once when the socket is gone. */
  onClosed(session: S): void;
}
