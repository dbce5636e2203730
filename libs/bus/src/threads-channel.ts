/**
 * One named channel of the thread hub (threads-hub.ts): the bus adapters each open their own
 * (push, devices, inbox writes, job notices). Closing a channel stops its work in order: no new
 * request is sent or served (those that come are answered OVERLOADED), and it resolves once
 * every request it sent or served is settled — answered, or failed typed when a thread went.
 */
import { OverloadedError, type Logger } from '@seqline/core';
import type { Frame } from './threads-frames.ts';

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface ChannelHandlers {
  /** A one-way message from thread `from`. */
  onMessage?(body: unknown, from: number): void;
  /** A request from thread `from`: what it resolves to is the answer, what it throws the error. */
  onRequest?(body: unknown, from: number): unknown;
  /** Thread `thread` is reachable: already there when the channel opened, or connected since. */
  onJoined?(thread: number): void;
  /** Thread `thread` is gone; its requests in flight failed already. */
  onGone?(thread: number): void;
}

/** What a channel needs of its hub (threads-hub.ts). */
export interface ChannelHub {
  readonly self: number;
  live(): number[];
  post(thread: number, frame: Frame): boolean;
  request(thread: number, ch: string, body: unknown): Promise<unknown>;
}

export class ThreadChannel {
  /** Set by the hub once the handlers run (see ThreadHub.open). */
  started = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;

  constructor(
    readonly name: string,
    private readonly hub: ChannelHub,
    private readonly handlers: ChannelHandlers,
    private readonly logger: Logger,
  ) {}

  get self(): number {
    return this.hub.self;
  }

  /** The threads reachable now. */
  live(): number[] {
    return this.hub.live();
  }

  /** A one-way message; false when the channel is closed or the thread gone (nothing sent). */
  send(thread: number, body: unknown): boolean {
    if (this.closing) return false;
    try {
      return this.hub.post(thread, { kind: 'msg', ch: this.name, body });
    } catch (err) {
      this.logger.error({ err, ch: this.name, thread }, 'message not cloneable; dropped');
      return false;
    }
  }

  broadcast(body: unknown): void {
    for (const thread of this.live()) this.send(thread, body);
  }

  /** The answer of `thread`, or its error as its SeqlineError class; ThreadUnavailableError once it is gone. */
  request(thread: number, body: unknown): Promise<unknown> {
    if (this.closing) return Promise.reject(new OverloadedError(`${this.name} channel of thread ${this.self} is closed`));
    return this.track(this.hub.request(thread, this.name, body));
  }

  /** Stops sending and serving; resolves once every request sent or served here settled. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    })();
    return this.closing;
  }

  /** Hub side: a message for this channel. */
  receive(body: unknown, from: number): void {
    if (this.closing || !this.handlers.onMessage) return;
    try {
      this.handlers.onMessage(body, from);
    } catch (err) {
      this.logger.error({ err, ch: this.name, from }, 'channel message handler threw');
    }
  }

  /** Hub side: a request for this channel; `answer` sends its outcome back. */
  serve(body: unknown, from: number, answer: (outcome: Outcome) => void): void {
    const { handlers } = this;
    if (this.closing || handlers.onRequest === undefined) {
      const why = this.closing ? `is closing` : `takes no requests`;
      return answer({ ok: false, error: new OverloadedError(`${this.name} channel of thread ${this.self} ${why}`) });
    }
    // Tracked until answered: close() resolves only after the answer went.
    void this.track(
      new Promise((resolve) => resolve(handlers.onRequest?.(body, from))).then(
        (value) => answer({ ok: true, value }),
        (error: unknown) => answer({ ok: false, error }),
      ),
    );
  }

  joined(thread: number): void {
    if (!this.closing) this.call(() => this.handlers.onJoined?.(thread), 'onJoined');
  }

  gone(thread: number): void {
    this.call(() => this.handlers.onGone?.(thread), 'onGone');
  }

  private call(fn: () => void, what: string): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ err, ch: this.name }, `channel ${what} handler threw`);
    }
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    const done = () => this.inFlight.delete(promise);
    promise.then(done, done);
    return promise;
  }
}
