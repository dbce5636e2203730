/**
 * The push subscribers of one process or thread, by inbox, as the in-process push buses keep them
 * (local-push-bus.ts, threads-push-bus.ts): a push reaches every subscriber of its inbox,
 * synchronously and in publish order; a subscriber that throws is logged and breaks nothing.
 */
import type { InboxKey, Logger, PushMessage } from '@seqline/core';

export type Subscriber = (msg: PushMessage) => void;

export class PushSubscribers {
  private readonly byInbox = new Map<InboxKey, Set<Subscriber>>();

  /** `held`: an inbox got its first subscriber here (true) or lost its last one (false). */
  constructor(
    private readonly logger: Logger,
    private readonly held: (inbox: InboxKey, held: boolean) => void = () => undefined,
  ) {}

  deliver(inbox: InboxKey, msg: PushMessage): void {
    const subs = this.byInbox.get(inbox);
    if (!subs) return; // gone since the publisher looked: the user disconnected
    // A snapshot: a subscriber may unsubscribe (itself or others) while we deliver.
    for (const onPush of [...subs]) {
      try {
        onPush(msg);
      } catch (err) {
        this.logger.error({ err, inbox }, 'push subscriber threw');
      }
    }
  }

  /** One push to each of `inboxes` subscribed here, each with its own inbox: only those cost anything. */
  deliverToEach(inboxes: readonly InboxKey[], msg: Omit<PushMessage, 'inbox'>): void {
    for (const inbox of inboxes) if (this.byInbox.has(inbox)) this.deliver(inbox, { ...msg, inbox });
  }

  subscribe(inbox: InboxKey, onPush: Subscriber): () => void {
    // Wrapped so the same function subscribed twice gets two independent subscriptions.
    const entry: Subscriber = (msg) => onPush(msg);
    let subs = this.byInbox.get(inbox);
    if (!subs) {
      subs = new Set();
      this.byInbox.set(inbox, subs);
      this.held(inbox, true);
    }
    subs.add(entry);
    const owner = subs;
    return () => {
      if (!owner.delete(entry) || owner.size > 0 || this.byInbox.get(inbox) !== owner) return;
      this.byInbox.delete(inbox);
      this.held(inbox, false);
    };
  }

  has(inbox: InboxKey): boolean {
    return this.byInbox.has(inbox);
  }

  /** The inboxes subscribed here. */
  inboxes(): InboxKey[] {
    return [...this.byInbox.keys()];
  }

  /** Drops every subscription (the bus closes); nothing is reported to `held`. */
  clear(): void {
    this.byInbox.clear();
  }
}
