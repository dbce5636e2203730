import { silentLogger } from '@seqline/core';
import type { InboxKey, Logger, PushBus, PushMessage } from '@seqline/core';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { subjectToken } from './subject-token.ts';

export interface NatsPushBusOptions {
  logger?: Logger;
  /** Subject root; pushes go to `<root>.<base64url(inbox)>`. Default `push.u`. */
  subjectRoot?: string;
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
 * that hold that user, never all of them. The connection belongs to the caller: close() leaves it open.
 */
export function createNatsPushBus(nc: NatsConnection, options: NatsPushBusOptions = {}): PushBus {
  const logger = (options.logger ?? silentLogger).child({ component: 'nats-push-bus' });
  const root = options.subjectRoot ?? 'push.u';
  const subjectOf = (inbox: InboxKey) => `${root}.${subjectToken(inbox)}`;
  const inboxes = new Map<InboxKey, InboxSubscription>();
  const encoder = new TextEncoder();
  let closed = false;

  function deliver(inbox: InboxKey, subscribers: Set<Subscriber>, raw: Msg): void {
    let msg: PushMessage;
    try {
      msg = raw.json<PushMessage>();
      // A push published to many inboxes carries none (publishToEach): the subscription names it.
      msg.inbox = inbox;
    } catch (err) {
      logger.warn({ err, inbox }, 'dropping an undecodable push');
      return;
    }
    for (const onPush of [...subscribers]) {
      try {
        onPush(msg);
      } catch (err) {
        logger.error({ err, inbox }, 'push subscriber threw');
      }
    }
  }

  return {
    publish(msg: PushMessage): void {
      if (closed) return;
      try {
        nc.publish(subjectOf(msg.inbox), JSON.stringify(msg));
      } catch (err) {
        // Best effort by design: the client recovers by syncing from its max seq.
        logger.warn({ err, inbox: msg.inbox }, 'push not published');
      }
    },

    publishToEach(inboxes: readonly InboxKey[], msg: Omit<PushMessage, 'inbox'>): void {
      if (closed || inboxes.length === 0) return;
      // Encoded once, bytes shared by every publish: a 2 000-member push was 2 000 JSON.stringify
      // and UTF-8 encodings, about half of a worker's CPU at 80 huge-group messages a second.
      const payload = encoder.encode(JSON.stringify(msg));
      for (const inbox of inboxes) {
        try {
          nc.publish(subjectOf(inbox), payload);
        } catch (err) {
          logger.warn({ err, inbox }, 'push not published');
        }
      }
    },

    subscribe(inbox: InboxKey, onPush: Subscriber): () => void {
      if (closed) return () => {};
      const subscriber: Subscriber = (msg) => onPush(msg);
      let entry = inboxes.get(inbox);
      if (!entry) {
        const subscribers = new Set<Subscriber>();
        const sub = nc.subscribe(subjectOf(inbox), {
          callback: (err, raw) => {
            if (err) logger.warn({ err, inbox }, 'push subscription error');
            else deliver(inbox, subscribers, raw);
          },
        });
        entry = { sub, subscribers };
        inboxes.set(inbox, entry);
      }
      entry.subscribers.add(subscriber);
      const owner = entry;
      return () => {
        if (!owner.subscribers.delete(subscriber) || owner.subscribers.size > 0) return;
        owner.sub.unsubscribe();
        if (inboxes.get(inbox) === owner) inboxes.delete(inbox);
      };
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const entry of inboxes.values()) entry.sub.unsubscribe();
      inboxes.clear();
    },
  };
}
