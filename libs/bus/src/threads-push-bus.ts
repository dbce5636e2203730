/**
 * The push bus of a process running several threads: a push reaches the subscribers of its
 * inbox on this thread at once, and goes to each other thread holding that inbox as presence
 * (threads-presence.ts) says — never to a thread without a socket of that user. A push to many
 * inboxes (`publishToEach`) goes once to each thread holding some of them. At most once, like a
 * socket: a push that crosses a subscription's announcement is missed, and the client, seeing the
 * `prevSeq` gap on its next push, syncs (`presenceSettled` closes that window where it matters).
 */
import { silentLogger } from '@seqline/core';
import type { InboxKey, Logger, PushBus, PushMessage } from '@seqline/core';
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

type Subscriber = (msg: PushMessage) => void;

type PushFrame = { op: 'push'; msg: PushMessage } | { op: 'each'; inboxes: InboxKey[]; push: Omit<PushMessage, 'inbox'> };

export function createThreadPushBus(options: ThreadPushBusOptions): ThreadPushBus {
  const logger = (options.logger ?? silentLogger).child({ component: 'thread-push-bus' });
  const subscribers = new Map<InboxKey, Set<Subscriber>>();
  const presence = new ThreadPresence();
  let closed = false;

  function deliver(inbox: InboxKey, msg: PushMessage): void {
    const subs = subscribers.get(inbox);
    if (!subs) return; // gone since the publisher looked: the user disconnected
    // A snapshot: a subscriber may unsubscribe (itself or others) while we deliver.
    for (const onPush of [...subs]) {
      try {
        onPush(msg);
      } catch (err) {
        logger.error({ err, inbox }, 'push subscriber threw');
      }
    }
  }

  function onMessage(body: unknown, from: number): void {
    if (presence.receive(body, from)) return;
    const frame = body as PushFrame;
    if (frame.op === 'push' && typeof frame.msg === 'object' && frame.msg !== null) return deliver(frame.msg.inbox, frame.msg);
    if (frame.op === 'each' && isStrings(frame.inboxes) && typeof frame.push === 'object' && frame.push !== null) {
      for (const inbox of frame.inboxes) deliver(inbox, { ...frame.push, inbox });
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
      deliver(msg.inbox, msg);
      for (const thread of presence.holders(msg.inbox).holding) channel.send(thread, { op: 'push', msg } satisfies PushFrame);
    },

    publishToEach(inboxes: readonly InboxKey[], msg: Omit<PushMessage, 'inbox'>): void {
      if (closed || inboxes.length === 0) return;
      for (const inbox of inboxes) if (subscribers.has(inbox)) deliver(inbox, { ...msg, inbox });
      // One message per thread holding members, however many they are: cloned once per thread.
      for (const [thread, held] of presence.route(inboxes))
        channel.send(thread, { op: 'each', inboxes: held as InboxKey[], push: msg } satisfies PushFrame);
    },

    subscribe(inbox: InboxKey, onPush: Subscriber): () => void {
      if (closed) return () => {};
      // Wrapped so the same function subscribed twice gets two independent subscriptions.
      const entry: Subscriber = (msg) => onPush(msg);
      let subs = subscribers.get(inbox);
      if (!subs) {
        subs = new Set();
        subscribers.set(inbox, subs);
        presence.set(inbox, true);
      }
      subs.add(entry);
      const owner = subs;
      return () => {
        if (!owner.delete(entry) || owner.size > 0 || subscribers.get(inbox) !== owner) return;
        subscribers.delete(inbox);
        if (!closed) presence.set(inbox, false);
      };
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
      for (const inbox of subscribers.keys()) presence.set(inbox, false);
      subscribers.clear();
      presence.flush();
      await channel.close();
    },
  };
  return bus;
}
