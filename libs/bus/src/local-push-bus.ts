import { silentLogger } from '@seqline/core';
import type { InboxKey, Logger, PushBus, PushMessage } from '@seqline/core';

export interface LocalPushBusOptions {
  logger?: Logger;
}

type Subscriber = (msg: PushMessage) => void;

/**
 * In-process push fan-out for embedded mode: a publish reaches every subscriber of its inbox,
 * synchronously and in publish order. Subscribers get the same object: treat it as read-only.
 */
export function createLocalPushBus(options: LocalPushBusOptions = {}): PushBus {
  const logger = (options.logger ?? silentLogger).child({ component: 'local-push-bus' });
  const subscribers = new Map<InboxKey, Set<Subscriber>>();
  let closed = false;

  const bus: PushBus = {
    publish(msg: PushMessage): void {
      if (closed) return;
      const subs = subscribers.get(msg.inbox);
      if (!subs) return;
      // A snapshot: a subscriber may unsubscribe (itself or others) while we deliver.
      for (const onPush of [...subs]) {
        try {
          onPush(msg);
        } catch (err) {
          logger.error({ err, inbox: msg.inbox }, 'push subscriber threw');
        }
      }
    },

    publishToEach(inboxes: readonly InboxKey[], msg: Omit<PushMessage, 'inbox'>): void {
      // In process there is nothing to encode: only the inboxes with a subscriber cost anything.
      for (const inbox of inboxes) if (subscribers.has(inbox)) bus.publish({ ...msg, inbox });
    },

    subscribe(inbox: InboxKey, onPush: Subscriber): () => void {
      if (closed) return () => {};
      // Wrapped so the same function subscribed twice gets two independent subscriptions.
      const entry: Subscriber = (msg) => onPush(msg);
      let subs = subscribers.get(inbox);
      if (!subs) {
        subs = new Set();
        subscribers.set(inbox, subs);
      }
      subs.add(entry);
      return () => {
        const current = subscribers.get(inbox);
        if (!current?.delete(entry)) return;
        if (current.size === 0) subscribers.delete(inbox);
      };
    },

    isOnline(inbox: InboxKey): boolean {
      // In process every socket subscribes here: a subscriber is a live socket.
      return subscribers.has(inbox);
    },

    async close(): Promise<void> {
      closed = true;
      subscribers.clear();
    },
  };
  return bus;
}
