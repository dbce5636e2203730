import { silentLogger } from '@seqline/core';
import type { InboxKey, Logger, PushBus, PushMessage, PushSubscription, PushToEach } from '@seqline/core';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { PRESENCE_CHUNK, PresenceAnnouncer, PresenceDirectory, presenceSubjects } from './nats-presence.ts';
import { subjectToken } from './subject-token.ts';

export interface NatsPushBusOptions {
  logger?: Logger;
  /** Subject root; pushes go to `<root>.<base64url(inbox)>`. Default `push.u`. */
  subjectRoot?: string;
  /**
   * Subject root of the presence protocol (nats-presence.ts): a push to many inboxes goes once
   * to each bus holding some of them. Default `push.p`.
   */
  presenceRoot?: string;
  /** How often a bus holding inboxes announces itself (default 1 000 ms). */
  presenceHeartbeatMs?: number;
  /**
   * Follow presence from creation (a process that publishes to many: a worker). Otherwise the
   * bus starts following on its first `publishToEach`, and routes 1.5 heartbeats later.
   */
  followPresence?: boolean;
}

/** What a NATS push bus has published, and what its presence directory knows (metrics). */
export interface PushBusStats {
  /** NATS messages published: one per inbox (1:1 pushes, unrouted group pushes) or one per gateway. */
  published: { inbox: number; gateway: number };
  /** Set once the bus follows presence (a worker): whether it routes now, and what it knows. */
  presence?: { ready: boolean; gateways: number; inboxes: number };
}

export interface NatsPushBus extends PushBus {
  stats(): PushBusStats;
}

type Subscriber = (msg: PushMessage) => void;

interface InboxSubscription {
  sub: Subscription;
  subscribers: Set<Subscriber>;
}

/**
 * Push fan-out over core NATS (at-most-once, like a socket: a client that misses a push sees a
 * prevSeq gap and syncs). A process subscribes only to the inboxes connected to it — one NATS
 * subscription per inbox, shared by its local subscribers — so a push reaches only the gateways
 * that hold that user, never all of them. A push to many inboxes (`publishToEach`, huge groups)
 * goes instead once to each bus holding some of them, as their presence announcements tell
 * (nats-presence.ts), or per inbox while the publisher cannot trust what it knows. The
 * connection belongs to the caller: close() leaves it open.
 */
export function createNatsPushBus(nc: NatsConnection, options: NatsPushBusOptions = {}): NatsPushBus {
  const logger = (options.logger ?? silentLogger).child({ component: 'nats-push-bus' });
  const root = options.subjectRoot ?? 'push.u';
  const subjectOf = (inbox: InboxKey) => `${root}.${subjectToken(inbox)}`;
  const inboxes = new Map<InboxKey, InboxSubscription>();
  const encoder = new TextEncoder();
  const published = { inbox: 0, gateway: 0 };
  let closed = false;

  function deliver(inbox: InboxKey, subscribers: Set<Subscriber>, msg: PushMessage): void {
    for (const onPush of [...subscribers]) {
      try {
        onPush(msg);
      } catch (err) {
        logger.error({ err, inbox }, 'push subscriber threw');
      }
    }
  }

  function decode<T>(raw: Msg, subject: string): T | undefined {
    try {
      return raw.json<T>();
    } catch (err) {
      logger.warn({ err, subject }, 'dropping an undecodable push');
      return undefined;
    }
  }

  // Presence: an announcer once this bus holds an inbox, a directory once it publishes to many.
  const presenceRoot = options.presenceRoot ?? 'push.p';
  const presence = {
    subjects: presenceSubjects(presenceRoot),
    options: { root: presenceRoot, heartbeatMs: options.presenceHeartbeatMs ?? 1_000, logger },
  };
  let announcer: PresenceAnnouncer | undefined;
  let routedSub: Subscription | undefined;
  let directory = options.followPresence ? new PresenceDirectory(nc, presence.options) : undefined;

  function announce(inbox: InboxKey, held: boolean): void {
    if (!announcer) {
      announcer = new PresenceAnnouncer(nc, presence.options);
      routedSub = nc.subscribe(presence.subjects.to(announcer.id), {
        callback: (err, raw) => {
          const routed = err ? undefined : decode<{ inboxes: InboxKey[]; push: Omit<PushMessage, 'inbox'> }>(raw, raw.subject);
          if (!routed || !Array.isArray(routed.inboxes)) return;
          for (const target of routed.inboxes) {
            // Gone since the publisher looked: the user disconnected, nothing to deliver.
            const entry = inboxes.get(target);
            if (entry) deliver(target, entry.subscribers, { ...routed.push, inbox: target });
          }
        },
      });
    }
    announcer.set(inbox, held);
  }

  function publishEachInbox(targets: readonly InboxKey[], payload: Uint8Array): void {
    for (const inbox of targets) {
      try {
        nc.publish(subjectOf(inbox), payload);
        published.inbox++;
      } catch (err) {
        logger.warn({ err, inbox }, 'push not published');
      }
    }
  }

  return {
    publish(msg: PushMessage): void {
      if (closed) return;
      try {
        nc.publish(subjectOf(msg.inbox), JSON.stringify(msg));
        published.inbox++;
      } catch (err) {
        // Best effort by design: the client recovers by syncing from its max seq.
        logger.warn({ err, inbox: msg.inbox }, 'push not published');
      }
    },

    publishToEach({ inboxes: targets, msg }: PushToEach): void {
      if (closed || targets.length === 0) return;
      // Encoded once, bytes shared by every publish: a 2 000-member push was 2 000 JSON.stringify
      // and UTF-8 encodings, about half of a worker's CPU at 80 huge-group messages a second.
      const json = JSON.stringify(msg);
      directory ??= new PresenceDirectory(nc, presence.options);
      const self = announcer && { id: announcer.id, holds: (inbox: string) => inboxes.has(inbox as InboxKey) };
      // No routes while the directory cannot be trusted (just started, a gateway being re-read).
      const routes = directory.route(targets, self);
      if (!routes) {
        publishEachInbox(targets, encoder.encode(json));
        return;
      }
      // One publish per bus holding members, instead of one per member, online or not.
      for (const [bus, held] of routes) {
        for (let i = 0; i < held.length; i += PRESENCE_CHUNK) {
          const chunk = held.slice(i, i + PRESENCE_CHUNK);
          try {
            nc.publish(presence.subjects.to(bus), `{"inboxes":${JSON.stringify(chunk)},"push":${json}}`);
            published.gateway++;
          } catch (err) {
            logger.warn({ err, bus }, 'routed push not published');
          }
        }
      }
    },

    subscribe({ inbox, onPush }: PushSubscription): () => void {
      if (closed) return () => {};
      const subscriber: Subscriber = (msg) => onPush(msg);
      let entry = inboxes.get(inbox);
      if (!entry) {
        const subscribers = new Set<Subscriber>();
        const sub = nc.subscribe(subjectOf(inbox), {
          callback: (err, raw) => {
            if (err) logger.warn({ err, inbox }, 'push subscription error');
            const msg = err ? undefined : decode<PushMessage>(raw, raw.subject);
            if (!msg) return;
            // A push published to many inboxes carries none (publishToEach): the subscription names it.
            msg.inbox = inbox;
            deliver(inbox, subscribers, msg);
          },
        });
        entry = { sub, subscribers };
        inboxes.set(inbox, entry);
        announce(inbox, true);
      }
      entry.subscribers.add(subscriber);
      const owner = entry;
      return () => {
        if (!owner.subscribers.delete(subscriber) || owner.subscribers.size > 0) return;
        owner.sub.unsubscribe();
        if (inboxes.get(inbox) !== owner) return;
        inboxes.delete(inbox);
        announce(inbox, false);
      };
    },

    isOnline(inbox: InboxKey): boolean | undefined {
      if (inboxes.has(inbox)) return true;
      // Another gateway's sockets are known only through presence, and only once it is trusted.
      const routes = directory?.route([inbox]);
      return routes === undefined ? undefined : routes.size > 0;
    },

    stats(): PushBusStats {
      return { published: { ...published }, ...(directory && { presence: directory.stats() }) };
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const entry of inboxes.values()) entry.sub.unsubscribe();
      inboxes.clear();
      announcer?.close();
      routedSub?.unsubscribe();
      directory?.close();
    },
  };
}
