/**
 * The push bus of a process running several threads: a push reaches the subscribers of its
 * inbox on this thread at once, and goes to each other thread holding that inbox as presence
 * (threads-presence.ts) says — never to a thread without a socket of that user. A push to many
 * inboxes (`publishToEach`) goes once to each thread holding some of them. At most once, like a
 * socket: a push that crosses a subscription's announcement is missed, and the client, seeing the
 * `prevSeq` gap on its next push, syncs (`presenceSettled` closes that window where it matters).
 */
import { silentLogger } from '@seqline/core';
import type { InboxKey, Logger, PushBus, PushMessage, PushSubscription, PushToEach } from '@seqline/core';
import { PushSubscribers } from './push-subscribers.ts';
import type { ThreadChannel } from './threads-channel.ts';
import type { ThreadHub } from './threads-hub.ts';
import { isStrings, ThreadPresence } from './threads-presence.ts';

export interface ThreadPushBusOptions {
  hub: ThreadHub;
  logger?: Logger;
  /** Channel name on the hub. Default `push`. */
  channel?: string;
}

export interface ThreadPushBus extends PushBus {
  /**
   * Sends this thread's subscription changes at once, ahead of any message sent after the call,
   * and resolves once every other thread reachable now has applied them: a push published
   * there after that reaches them. Threads that go meanwhile are skipped.
   */
  presenceSettled(): Promise<void>;
  /** What presence knows of the other threads (metrics). */
  stats(): { threads: number; known: number; keys: number };
}

type PushFrame = { op: 'push'; msg: PushMessage } | { op: 'each'; inboxes: InboxKey[]; push: Omit<PushMessage, 'inbox'> };

export function createThreadPushBus(options: ThreadPushBusOptions): ThreadPushBus {
  const logger = (options.logger ?? silentLogger).child({ component: 'thread-push-bus' });
  const presence = new ThreadPresence();
  let closed = false;
  // The others route an inbox here while it has a subscriber here.
  const subscribers = new PushSubscribers(logger, (inbox, held) => (closed ? undefined : presence.set(inbox, held)));

  function onMessage(body: unknown, from: number): void {
    if (presence.receive(body, from)) return;
    const frame = body as PushFrame;
    if (frame.op === 'push' && typeof frame.msg === 'object' && frame.msg !== null) return subscribers.deliver(frame.msg.inbox, frame.msg);
    if (frame.op === 'each' && isStrings(frame.inboxes) && typeof frame.push === 'object' && frame.push !== null) {
      for (const inbox of frame.inboxes) subscribers.deliver(inbox, { ...frame.push, inbox });
      return;
    }
    logger.warn({ from }, 'malformed push frame dropped');
  }

  const channel: ThreadChannel = options.hub.open(options.channel ?? 'push', {
    onMessage: (body, from) => (typeof body === 'object' && body !== null ? onMessage(body, from) : undefined),
    // A sync request is answered after every message sent before it: the port keeps the order.
    onRequest: () => null,
    onJoined: (thread) => presence.joined(thread),
    onGone: (thread) => presence.gone(thread),
  });
  presence.attach(channel);

  const bus: ThreadPushBus = {
    publish(msg: PushMessage): void {
      if (closed) return;
      subscribers.deliver(msg.inbox, msg);
      for (const thread of presence.holders(msg.inbox).holding) channel.send(thread, { op: 'push', msg } satisfies PushFrame);
    },

    publishToEach({ inboxes, msg }: PushToEach): void {
      if (closed || inboxes.length === 0) return;
      subscribers.deliverToEach(inboxes, msg);
      // One message per thread holding members, however many they are: cloned once per thread.
      for (const [thread, held] of presence.route(inboxes))
        channel.send(thread, { op: 'each', inboxes: held as InboxKey[], push: msg } satisfies PushFrame);
    },

    subscribe({ inbox, onPush }: PushSubscription): () => void {
      return closed ? () => {} : subscribers.subscribe(inbox, onPush);
    },

    isOnline(inbox: InboxKey): boolean | undefined {
      if (subscribers.has(inbox)) return true;
      const { holding, unknown } = presence.holders(inbox);
      if (holding.length > 0) return true;
      // A thread not heard from yet (still starting) may hold the user.
      return unknown.length > 0 ? undefined : false;
    },

    async presenceSettled(): Promise<void> {
      presence.flush();
      await Promise.allSettled(channel.live().map((thread) => channel.request(thread, { op: 'sync' })));
    },

    stats: () => presence.stats(),

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // The others stop routing here: this thread holds nobody any more.
      for (const inbox of subscribers.inboxes()) presence.set(inbox, false);
      subscribers.clear();
      presence.flush();
      await channel.close();
    },
  };
  return bus;
}
