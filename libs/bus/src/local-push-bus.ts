import { silentLogger } from '@seqline/core';
import type { InboxKey, Logger, PushBus, PushMessage, PushSubscription, PushToEach } from '@seqline/core';
import { PushSubscribers } from './push-subscribers.ts';

export interface LocalPushBusOptions {
  logger?: Logger;
}

/**
 * In-process push fan-out for embedded mode: a publish reaches every subscriber of its inbox,
 * synchronously and in publish order. Subscribers get the same object: treat it as read-only.
 */
export function createLocalPushBus(options: LocalPushBusOptions = {}): PushBus {
  const subscribers = new PushSubscribers((options.logger ?? silentLogger).child({ component: 'local-push-bus' }));
  let closed = false;

  return {
    publish(msg: PushMessage): void {
      if (!closed) subscribers.deliver(msg.inbox, msg);
    },

    publishToEach({ inboxes, msg }: PushToEach): void {
      // In process there is nothing to encode: only the inboxes with a subscriber cost anything.
      if (!closed) subscribers.deliverToEach(inboxes, msg);
    },

    subscribe({ inbox, onPush }: PushSubscription): () => void {
      return closed ? () => {} : subscribers.subscribe(inbox, onPush);
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
}
