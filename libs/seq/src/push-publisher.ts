/**
 * How an inbox owner publishes the push of an append: at once without a conversation index, or
 * when the states the store's index writer computed in the append are all it needs; after a
 * bounded read otherwise (PushConversations). The pushes of one inbox leave in append order
 * even then — a push ready early waits for the ones before it — so a client never sees a
 * prevSeq gap the owner made.
 */
import {
  KeyedQueue,
  type Entry,
  type InboxKey,
  type IndexedConversations,
  type Logger,
  type PushBus,
  type PushMessage,
} from '@seqline/core';
import type { PushConversations } from './push-conversations.ts';

export class PushPublisher {
  /** Per inbox, the pushes still on their way, sent in publish order. */
  private readonly pending = new KeyedQueue<InboxKey>();

  constructor(
    private readonly push: PushBus,
    private readonly convs: PushConversations | undefined,
    private readonly logger: Logger,
  ) {}

  /** Never throws and never waits: the append is durable whatever becomes of its push. */
  publish(inbox: InboxKey, prevSeq: number, entries: Entry[], indexed?: IndexedConversations): void {
    if (this.convs === undefined) return this.send({ inbox, prevSeq, entries });
    // The read (if any) starts now, beside the pushes queued before this one; only the send waits.
    const states = this.convs.states(inbox, entries, indexed); // never rejects
    if ('now' in states && !this.pending.busy(inbox)) return this.send(withConvs({ inbox, prevSeq, entries }, states.now));
    void this.pending.run(inbox, async () => {
      const convs = 'now' in states ? states.now : await states.later;
      this.send(withConvs({ inbox, prevSeq, entries }, convs));
    });
  }

  /** Resolves once every push published so far is out. */
  idle(): Promise<void> {
    return this.pending.idle();
  }

  private send(msg: PushMessage): void {
    try {
      this.push.publish(msg);
    } catch (err) {
      // The append is durable; a lost push only means the client syncs.
      this.logger.warn({ inbox: msg.inbox, err }, 'push publish failed');
    }
  }
}

function withConvs(msg: PushMessage, convs: PushMessage['convs']): PushMessage {
  return convs === undefined ? msg : { ...msg, convs };
}
