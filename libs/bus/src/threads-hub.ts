/**
 * The other threads of this process, as one thread sees them: one message port to each, carrying
 * named channels (threads-channel.ts) of one-way messages and requests. A port delivers in order
 * and loses nothing while both ends live, so nothing here retries or times out: a request ends
 * with its answer, or with ThreadUnavailableError as soon as the port's `close` event says the
 * other thread is gone (it exited, crashed, was terminated, or closed its hub).
 */
import { InternalError, OverloadedError, silentLogger, type Logger } from '@seqline/core';
import { ThreadChannel, type ChannelHandlers, type Outcome } from './threads-channel.ts';
import { asFrame, fromFrameError, ThreadUnavailableError, toFrameError, type Frame } from './threads-frames.ts';

/** What the hub needs of a port: node:worker_threads' MessagePort is one. */
export interface ThreadPort {
  postMessage(value: unknown): void;
  on(event: 'message', listener: (value: unknown) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  close(): void;
}

export interface ThreadHubOptions {
  /** This thread's number; the others know it by it. */
  self: number;
  logger?: Logger;
  /**
   * Frames held for channels this thread has not opened yet (it is still starting). Past it, a
   * request is answered OVERLOADED and a message dropped (logged). Default 10 000.
   */
  maxEarlyFrames?: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Peer {
  thread: number;
  port: ThreadPort;
  live: boolean;
  /** This thread's requests to that one, by id, until answered. */
  pending: Map<number, Pending>;
}

export class ThreadHub {
  readonly self: number;
  private readonly logger: Logger;
  private readonly peers = new Map<number, Peer>();
  private readonly channels = new Map<string, ThreadChannel>();
  private readonly early: Array<{ peer: Peer; frame: Extract<Frame, { ch: string }> }> = [];
  private readonly maxEarlyFrames: number;
  private nextId = 0;
  private closing: Promise<void> | undefined;

  constructor(options: ThreadHubOptions) {
    this.self = options.self;
    this.logger = (options.logger ?? silentLogger).child({ component: 'thread-hub', thread: options.self });
    this.maxEarlyFrames = options.maxEarlyFrames ?? 10_000;
  }

  /** Another thread, reached through `port`: a first one, or one that replaces a thread gone. */
  connect(thread: number, port: ThreadPort): void {
    if (thread === this.self) throw new InternalError(`thread ${thread} cannot connect to itself`);
    if (this.closing) return port.close();
    const old = this.peers.get(thread);
    if (old) {
      this.drop(old, 'replaced');
      old.port.close();
    }
    const peer: Peer = { thread, port, live: true, pending: new Map() };
    this.peers.set(thread, peer);
    port.on('message', (value) => this.receive(peer, value));
    port.on('close', () => this.drop(peer, 'its port closed'));
    for (const channel of this.channels.values()) if (channel.started) channel.joined(thread);
  }

  /** The threads reachable now. */
  live(): number[] {
    return [...this.peers.values()].filter((p) => p.live).map((p) => p.thread);
  }

  /**
   * Opens channel `name` here. Its handlers start right after the caller's synchronous code (a
   * microtask, before any port delivers more): `onJoined` for every thread already reachable,
   * then what other threads sent on it before, in order.
   */
  open(name: string, handlers: ChannelHandlers): ThreadChannel {
    if (this.channels.has(name)) throw new InternalError(`channel ${name} is already open`);
    if (this.closing) throw new OverloadedError(`thread ${this.self} is closing`);
    const channel = new ThreadChannel(name, this, handlers, this.logger);
    this.channels.set(name, channel);
    queueMicrotask(() => this.start(channel));
    return channel;
  }

  private start(channel: ThreadChannel): void {
    channel.started = true;
    for (const thread of this.live()) channel.joined(thread);
    for (let i = 0; i < this.early.length;) {
      const held = this.early[i]!;
      if (held.frame.ch !== channel.name) i++;
      else {
        this.early.splice(i, 1);
        this.deliver(channel, held.peer, held.frame);
      }
    }
  }

  /** Posts a frame to `thread`; false when it is gone (the frame goes nowhere). */
  post(thread: number, frame: Frame): boolean {
    const peer = this.peers.get(thread);
    if (!peer?.live) return false;
    peer.port.postMessage(frame);
    return true;
  }

  /** A request on channel `ch`: its answer, its error (as its SeqlineError class), or ThreadUnavailableError. */
  request(thread: number, ch: string, body: unknown): Promise<unknown> {
    const peer = this.peers.get(thread);
    if (!peer?.live) return Promise.reject(new ThreadUnavailableError(thread, peer ? 'gone' : 'not connected'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      peer.pending.set(id, { resolve, reject });
      try {
        peer.port.postMessage({ kind: 'req', ch, id, body } satisfies Frame);
      } catch (err) {
        // Not cloneable (a function, a class instance with private state): a bug of the caller.
        peer.pending.delete(id);
        reject(new InternalError(`request on ${ch} not sent`, { cause: err }));
      }
    });
  }

  /** Answers request `id` on the link it came by: a reply to a thread gone (or replaced since) goes nowhere. */
  private answer(peer: Peer, id: number, outcome: Outcome): void {
    if (!peer.live) return;
    const frame: Frame = outcome.ok
      ? { kind: 'res', id, ok: true, value: outcome.value }
      : { kind: 'res', id, ok: false, error: toFrameError(outcome.error) };
    try {
      peer.port.postMessage(frame);
    } catch (err) {
      this.logger.error({ err, thread: peer.thread }, 'answer not cloneable; answering INTERNAL');
      peer.port.postMessage({ kind: 'res', id, ok: false, error: toFrameError(new InternalError('answer not cloneable')) } satisfies Frame);
    }
  }

  /**
   * Closes every channel (each stops taking work and drains what is in flight), answers what
   * waits for a channel never opened, then closes every port: the other threads see this one gone.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.channels.values()].map((channel) => channel.close()));
      for (const { peer, frame } of this.early.splice(0))
        if (frame.kind === 'req') this.answer(peer, frame.id, { ok: false, error: new OverloadedError(`thread ${this.self} closed`) });
      for (const peer of this.peers.values()) {
        this.drop(peer, 'this hub closed');
        peer.port.close();
      }
    })();
    return this.closing;
  }

  private receive(peer: Peer, value: unknown): void {
    if (!peer.live) return;
    const frame = asFrame(value);
    if (frame === undefined) return this.logger.warn({ thread: peer.thread }, 'malformed frame dropped');
    if (frame.kind === 'res') {
      const pending = peer.pending.get(frame.id);
      if (pending === undefined) return this.logger.warn({ thread: peer.thread, id: frame.id }, 'answer to no request dropped');
      peer.pending.delete(frame.id);
      if (frame.ok) pending.resolve(frame.value);
      else pending.reject(fromFrameError(frame.error));
      return;
    }
    const channel = this.channels.get(frame.ch);
    if (channel?.started) return this.deliver(channel, peer, frame);
    if (channel || (this.early.length < this.maxEarlyFrames && !this.closing)) return void this.early.push({ peer, frame });
    this.logger.warn({ thread: peer.thread, ch: frame.ch }, 'frame for a channel not open here refused');
    if (frame.kind === 'req')
      this.answer(peer, frame.id, { ok: false, error: new OverloadedError(`channel ${frame.ch} not open on thread ${this.self}`) });
  }

  private deliver(channel: ThreadChannel, peer: Peer, frame: Extract<Frame, { ch: string }>): void {
    if (frame.kind === 'msg') return channel.receive(frame.body, peer.thread);
    channel.serve(frame.body, peer.thread, (outcome) => this.answer(peer, frame.id, outcome));
  }

  /** The thread is gone: every request to it fails now, typed, and the channels forget it. */
  private drop(peer: Peer, reason: string): void {
    if (!peer.live) return;
    peer.live = false;
    if (this.peers.get(peer.thread) === peer) this.peers.delete(peer.thread);
    for (const pending of peer.pending.values()) pending.reject(new ThreadUnavailableError(peer.thread, reason));
    peer.pending.clear();
    // What it sent to channels not open yet is of a thread gone: nobody to answer, nothing to learn.
    for (let i = this.early.length - 1; i >= 0; i--) if (this.early[i]!.peer === peer) this.early.splice(i, 1);
    for (const channel of this.channels.values()) channel.gone(peer.thread);
  }
}
