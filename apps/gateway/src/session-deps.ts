/** What a ClientSession is given: its limits, who it is, and the gateway's services. */
import type { Clock, Logger, RefusalLimits } from '@seqline/core';
import type { Caller, Messaging } from '@seqline/messaging';
import type { SocketDevice, VerifyToken } from './auth.ts';
import type { InFlight } from './in-flight.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { TurnBatch } from './turn-batch.ts';

/** The refusal rule's limits (core's RefusalLimits: bad-frame streak, refusal allowance, hold) and the socket's own. */
export interface SessionLimits extends RefusalLimits {
  /** A socket whose unsent bytes exceed this is closed; the client reconnects and syncs. */
  maxBackpressureBytes: number;
  /** Requests of one socket served at once; more are refused with OVERLOADED. */
  maxInFlightPerConnection: number;
}

/** Who the socket is and until when (epoch ms; null = the verifier reports no expiry). */
export interface SocketIdentity {
  caller: Caller;
  expiresAt: number | null;
  /** The device it named (token or URL), for the login policy. */
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
  /**
   * The refusal rule closes the socket: the gateway holds its user for `holdMs`. The socket is
   * closed once this settles (the hold recorded where every gateway reads it); never rejects.
   */
  onHold(session: S, holdMs: number): Promise<void>;
  /** Called once when the socket is gone. */
  onClosed(session: S): void;
}
