/** One authenticated WebSocket: frames in, replies and pushes out. */
import { OverloadedError, RateLimitedError, type Logger, type SeqlineError } from '@seqline/core';
import type { Caller, Messaging } from '@seqline/messaging';
import { decodeRequest, encodeError, encodeGroupPush, encodePush, encodeReply, type ClientRequest } from '@seqline/protocol';
import { dispatch } from './dispatch.ts';
import { toClientError } from './errors.ts';
import type { InFlight } from './in-flight.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { TurnBatch } from './turn-batch.ts';
import { CLOSE_CODES, type ConnectionListener, type SocketConnection } from './transport/transport.ts';

export interface SessionLimits {
  /** A socket whose unsent bytes exceed this is closed; the client reconnects and syncs. */
  maxBackpressureBytes: number;
  /** Undecodable frames in a row tolerated before the socket is closed. */
  maxConsecutiveBadFrames: number;
  /** Requests of one socket served at once; more are refused with OVERLOADED. */
  maxInFlightPerConnection: number;
}

export interface SessionDeps {
  messaging: Messaging;
  logger: Logger;
  metrics: GatewayMetrics;
  rateLimiter: RateLimiter | null;
  limits: SessionLimits;
  inFlight: InFlight;
  /** Where requests admitted synchronously wait for the end of the turn (see TurnBatch). */
  turn: TurnBatch;
  isClosing(): boolean;
  /** Called once when the socket is gone. */
  onClosed(session: ClientSession): void;
}

export class ClientSession implements ConnectionListener {
  private badStreak = 0;
  private inFlight = 0;
  private unsubscribe: (() => void) | null = null;
  private readonly logger: Logger;
  private readonly rateKey: string;

  constructor(private readonly conn: SocketConnection, readonly caller: Caller, private readonly deps: SessionDeps) {
    this.logger = deps.logger.child({ tenant: caller.tenant, user: caller.user });
    this.rateKey = `${caller.tenant}:${caller.user}`;
    deps.metrics.connections.inc();
    deps.metrics.connectionsOpened.inc();
    try {
      this.unsubscribe = deps.messaging.subscribe(caller, (push) => {
        const frame = push.group === undefined
          ? encodePush(push.prevSeq, push.entries)
          : encodeGroupPush(push.group, push.prevSeq, push.entries);
        if (this.sendFrame(frame)) deps.metrics.pushes.inc();
      });
    } catch (err) {
      this.logger.error({ err }, 'push subscription failed; closing socket');
      this.forceClose(CLOSE_CODES.internalError, 'subscribe failed', 'subscribe');
    }
  }

  message(data: ArrayBuffer | Buffer): void {
    const decoded = decodeRequest(data); // synchronous: uWS reuses `data` after we return
    if (!decoded.ok) {
      this.deps.metrics.frames.inc({ op: 'invalid' });
      this.reply(decoded.id, toClientError(decoded.error, this.logger, this.deps.metrics, { op: 'invalid' }));
      if (++this.badStreak > this.deps.limits.maxConsecutiveBadFrames) {
        this.forceClose(CLOSE_CODES.policyViolation, 'too many bad frames', 'bad_frames');
      }
      return;
    }
    this.badStreak = 0;
    const { request } = decoded;
    this.deps.metrics.frames.inc({ op: request.op });
    const refusal = this.admit();
    if (refusal) return this.reply(request.id, toClientError(refusal, this.logger, this.deps.metrics, { op: request.op }));
    // Counted from admission on: requests waiting for the limiter or the turn count as in flight.
    this.begin();
    const allowed = this.deps.rateLimiter?.take(this.rateKey) ?? true;
    // Queued in the turn when the limiter answers at once: requests then reach Messaging in frame order.
    if (allowed === true) return this.deps.turn.add(() => void this.serve(request));
    if (allowed === false) return this.refuseRate(request);
    void allowed.then(
      (ok) => (ok ? this.serve(request) : this.refuseRate(request)),
      (err: unknown) => {
        this.end();
        this.reply(request.id, toClientError(err, this.logger, this.deps.metrics, { op: request.op }));
      },
    );
  }

  closed(code: number): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.deps.metrics.connections.dec();
    this.deps.metrics.connectionsClosed.inc({ code: String(code) });
    this.logger.debug({ code }, 'socket closed');
    this.deps.onClosed(this);
  }

  /** Closes this socket (shutdown, admin action). */
  close(code: number, reason: string): void {
    this.conn.close(code, reason);
  }

  private admit(): SeqlineError | null {
    if (this.deps.isClosing()) return new OverloadedError('server shutting down, reconnect');
    if (this.inFlight >= this.deps.limits.maxInFlightPerConnection) return new OverloadedError('too many requests in flight on this connection');
    return null;
  }

  private refuse(error: SeqlineError, request: ClientRequest): SeqlineError {
    return toClientError(error, this.logger, this.deps.metrics, { op: request.op });
  }

  private begin(): void {
    this.inFlight++;
    this.deps.inFlight.begin();
  }

  private end(): void {
    this.inFlight--;
    this.deps.inFlight.end();
  }

  private refuseRate(request: ClientRequest): void {
    this.end();
    this.reply(request.id, this.refuse(new RateLimitedError(), request));
  }

  /** Serves an admitted request (counted by begin()). */
  private async serve(request: ClientRequest): Promise<void> {
    const stopTimer = this.deps.metrics.opDuration.startTimer({ op: request.op });
    try {
      const result = await dispatch(this.deps.messaging, this.caller, request);
      this.sendFrame(encodeReply(request.id, result));
    } catch (err) {
      this.reply(request.id, toClientError(err, this.logger, this.deps.metrics, { op: request.op, requestId: request.id }));
    } finally {
      stopTimer();
      this.end();
    }
  }

  private reply(id: number | null, error: SeqlineError): void {
    this.sendFrame(encodeError(id, error));
  }

  /** Sends, then enforces the backpressure bound: a client that does not read is cut off. */
  private sendFrame(text: string): boolean {
    if (!this.conn.isOpen) return false;
    const sent = this.conn.send(text);
    if (!sent || this.conn.bufferedAmount() > this.deps.limits.maxBackpressureBytes) {
      // The peer is not reading, so a close frame would queue behind the backlog: drop it.
      this.forceClose(CLOSE_CODES.tryAgainLater, 'backpressure', 'backpressure', true);
      return false;
    }
    return true;
  }

  private forceClose(code: number, reason: string, metric: string, hard = false): void {
    if (!this.conn.isOpen) return;
    this.deps.metrics.forcedCloses.inc({ reason: metric });
    this.logger.info({ code, reason }, 'closing socket');
    if (hard) this.conn.terminate();
    else this.conn.close(code, reason);
  }
}
