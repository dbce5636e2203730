/** One authenticated WebSocket: frames in, replies and pushes out. */
import { randomUUID } from 'node:crypto';
import {
  frameCost,
  OverloadedError,
  RateLimitedError,
  systemClock,
  UnauthorizedError,
  type Clock,
  type DeviceSession,
  type FrameEventKind,
  type Logger,
  type SeqlineError,
} from '@seqline/core';
import type { Caller } from '@seqline/messaging';
import { decodeRequest, encodeError, encodeKicked, encodeReply, type ClientRequest } from '@seqline/protocol';
import type { SocketDevice } from './auth.ts';
import { dispatch } from './dispatch.ts';
import { toClientError } from './errors.ts';
import { leadingRequestId, REFUSAL_CLOSE_METRICS, SocketRefusals } from './frame-charge.ts';
import { pushFrameOf } from './push-frame.ts';
import type { SessionDeps, SocketIdentity } from './session-deps.ts';
import { SessionExpiry } from './session-expiry.ts';
import { CLOSE_CODES, type ConnectionListener, type SocketConnection } from './transport/transport.ts';

export type { SessionDeps, SessionLimits, SocketIdentity } from './session-deps.ts';
export { expiryOf } from './session-expiry.ts';

const REPLACED = 'session replaced by another login';
const HELD = 'held after too many refused frames; reconnect later';

export class ClientSession implements ConnectionListener {
  readonly caller: Caller;
  /** When the socket was accepted (epoch ms): the oldest of a user's sockets goes first. */
  readonly openedAt: number;
  private inFlight = 0;
  private readonly expiry: SessionExpiry;
  private unsubscribe: (() => void) | null = null;
  private readonly refusals: SocketRefusals;
  /** Set once the refusal rule closed this socket, or its user was found held: no frame is read any more. */
  private cutOff = false;
  /** Its user is held (learnt after the socket opened): nothing waiting is served. */
  private heldOff = false;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** `tenant:user`: the rate-limit key. */
  readonly rateKey: string;
  /** Unique per socket: the session id of `seqline-admin devices`. */
  readonly id = randomUUID();
  readonly device: SocketDevice;
  /** Requests wait for this before they are served: the kicks of this login, a hold check (see serveAfter). */
  private gate: Promise<void> | null = null;
  /** Set once a newer login displaced this session (see kick). */
  private kicking: Promise<void> | null = null;
  private onIdle: (() => void) | null = null;

  constructor(
    private readonly conn: SocketConnection,
    identity: SocketIdentity,
    private readonly deps: SessionDeps<ClientSession>,
  ) {
    this.caller = identity.caller;
    this.device = identity.device;
    this.clock = deps.clock ?? systemClock;
    this.openedAt = deps.acceptedAt();
    this.expiry = new SessionExpiry(identity.expiresAt, this.clock, () =>
      this.forceClose(CLOSE_CODES.tokenExpired, 'token expired', 'token_expired'),
    );
    this.refusals = new SocketRefusals(deps.limits, this.clock);
    this.logger = deps.logger.child({ tenant: this.caller.tenant, user: this.caller.user });
    this.rateKey = `${this.caller.tenant}:${this.caller.user}`;
    deps.metrics.connections.inc();
    deps.metrics.connectionsOpened.inc();
    this.expiry.arm();
    try {
      this.unsubscribe = deps.messaging.subscribe(this.caller, (push) => {
        if (this.sendFrame(pushFrameOf(push))) deps.metrics.pushes.inc();
      });
    } catch (err) {
      this.logger.error({ err }, 'push subscription failed; closing socket');
      this.forceClose(CLOSE_CODES.internalError, 'subscribe failed', 'subscribe');
    }
  }

  message(data: ArrayBuffer | Buffer): void {
    if (!this.conn.isOpen || this.cutOff) return; // closed, or being closed, by an earlier frame of the same read
    if (this.expiry.expired()) return this.refuseExpired(data);
    // Charged before decoding, by size, valid or not: a sender over its rate costs no parsing.
    const allowed = this.deps.rateLimiter?.take(this.rateKey, frameCost(data.byteLength)) ?? true;
    if (allowed === false) return this.refuseUnread(data);
    const decoded = decodeRequest(data); // synchronous: uWS reuses `data` after we return
    if (!decoded.ok) {
      if (allowed !== true) allowed.catch(() => undefined); // charged all the same; nothing to serve
      this.deps.metrics.frames.inc({ op: 'invalid' });
      this.reply(decoded.id, toClientError(decoded.error, this.logger, this.deps.metrics, { op: 'invalid' }));
      return this.charge('undecodable', data.byteLength);
    }
    this.charge('decoded', data.byteLength);
    const { request } = decoded;
    this.deps.metrics.frames.inc({ op: request.op });
    const refusal = this.admit();
    if (refusal) return this.reply(request.id, toClientError(refusal, this.logger, this.deps.metrics, { op: request.op }));
    // Counted from admission on: requests waiting for the limiter or the turn count as in flight.
    this.begin();
    // Queued in the turn when the limiter answers at once: requests then reach Messaging in frame order.
    if (allowed === true) return this.deps.turn.add(() => void this.serve(request));
    void allowed.then(
      (ok) => (ok ? this.serve(request) : this.refuseRate(request)),
      (err: unknown) => {
        this.end();
        this.reply(request.id, toClientError(err, this.logger, this.deps.metrics, { op: request.op }));
      },
    );
  }

  closed(code: number): void {
    this.expiry.stop();
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.deps.metrics.connections.dec();
    this.deps.metrics.connectionsClosed.inc({ code: String(code) });
    this.logger.debug({ code }, 'socket closed');
    this.deps.onClosed(this);
  }

  /** Closes this socket (shutdown, admin action, the per-user cap). */
  close(code: number, reason: string, metric?: string): void {
    if (metric !== undefined) this.forceClose(code, reason, metric);
    else this.conn.close(code, reason);
  }

  get isOpen(): boolean {
    return this.conn.isOpen;
  }

  get isLive(): boolean {
    return this.conn.isOpen && this.kicking === null;
  }

  describe(gateway: string): DeviceSession {
    return { session: this.id, ...this.device, since: this.openedAt, gateway };
  }

  /** No request is served before `told` settles, nor before what it waited for: displaced sessions hear first; holds are known. */
  serveAfter(told: Promise<void>): void {
    // The caller logs a failed displacement; waiting never fails a request.
    const gate = Promise.all([this.gate, told.catch(() => undefined)])
      .then(() => undefined)
      .finally(() => {
        if (this.gate === gate) this.gate = null;
      });
    this.gate = gate;
  }

  /** Its user turned out to be held (by another gateway): what waits is refused, the socket closes (1008). */
  refuseHeld(): void {
    this.heldOff = true;
    if (this.cutOff) return; // already being closed by the refusal rule, with its reason
    this.cutOff = true;
    this.forceClose(CLOSE_CODES.policyViolation, HELD, 'held');
  }

  /**
   * Displaced by a newer login: new frames are refused, requests already being served answer
   * (waiting at most `drainMs`), then the `kicked` frame goes out and the socket closes with 4409.
   */
  kick(by: SocketDevice, drainMs: number): Promise<void> {
    this.kicking ??= (async () => {
      this.unsubscribe?.(); // a replaced session gets no more pushes
      this.unsubscribe = null;
      if (this.inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, drainMs);
          this.onIdle = () => (clearTimeout(timer), resolve());
        });
      }
      this.sendFrame(encodeKicked(by));
      this.forceClose(CLOSE_CODES.replaced, 'session replaced by another login', 'replaced');
    })();
    return this.kicking;
  }

  private admit(): SeqlineError | null {
    if (this.kicking) return new UnauthorizedError(REPLACED);
    if (this.deps.isClosing()) return new OverloadedError('server shutting down, reconnect');
    if (this.inFlight >= this.deps.limits.maxInFlightPerConnection)
      return new OverloadedError('too many requests in flight on this connection');
    return null;
  }

  private begin(): void {
    this.inFlight++;
    this.deps.inFlight.begin();
  }

  private end(): void {
    this.inFlight--;
    this.deps.inFlight.end();
    if (this.inFlight === 0) this.onIdle?.();
  }

  private refuseRate(request: ClientRequest): void {
    this.end();
    this.reply(request.id, toClientError(new RateLimitedError(), this.logger, this.deps.metrics, { op: request.op }));
    this.charge('refused', 0);
  }

  /** Over the rate: answered from the frame's first bytes, never decoded. */
  private refuseUnread(data: ArrayBuffer | Buffer): void {
    this.deps.metrics.frames.inc({ op: 'rate_limited' });
    this.deps.metrics.errors.inc({ code: 'RATE_LIMITED' });
    this.reply(leadingRequestId(data), new RateLimitedError());
    this.charge('refused', data.byteLength);
  }

  /** Core's refusal rule on this frame. A socket it closes holds its user first: frames cost reads even when refused. */
  private charge(kind: FrameEventKind, bytes: number): void {
    const verdict = this.refusals.charge(kind, bytes);
    if (verdict.action === 'continue') return;
    this.cutOff = true;
    const close = () => this.forceClose(CLOSE_CODES.policyViolation, verdict.reason, REFUSAL_CLOSE_METRICS[verdict.reason]);
    // Closed once the hold is recorded: a client that reconnects at once, through any gateway, is held.
    void this.deps.onHold(this, verdict.holdMs).then(close, close);
  }

  private refuseExpired(data: ArrayBuffer | Buffer): void {
    this.deps.metrics.errors.inc({ code: 'UNAUTHORIZED' });
    this.reply(leadingRequestId(data), new UnauthorizedError('token expired; renew with auth before exp, or reconnect'));
    this.forceClose(CLOSE_CODES.tokenExpired, 'token expired', 'token_expired');
  }

  /** The `auth` op: a valid, unexpired token of this very user and tenant moves the expiry. */
  private async renew(token: string): Promise<{ exp: number | null }> {
    const claims = await this.deps.verifyToken(token);
    return this.expiry.renew(claims, this.caller);
  }

  /** Serves an admitted request (counted by begin()). */
  private async serve(request: ClientRequest): Promise<void> {
    const stopTimer = this.deps.metrics.opDuration.startTimer({ op: request.op });
    try {
      if (this.gate) await this.gate;
      // Rights are checked when used: a request not yet begun when the kick came is refused.
      if (this.kicking) throw new UnauthorizedError(REPLACED);
      if (this.heldOff) throw new RateLimitedError(HELD);
      const result =
        request.op === 'auth' ? await this.renew(request.args.token) : await dispatch(this.deps.messaging, this.caller, request);
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
