/**
 * How an inbox owner publishes the push of an append: at once without a conversation index, or
 * when the states the store's index writer computed in the append are all it needs; after a
 * bounded read otherwise (PushConversations). The pushes of one inbox leave in append order
 * even then — a push ready early waits for the ones before it — so a client never sees a
 * prevSeq gap the owner made.
 */
import type { Entry, InboxKey, IndexedConversations, Logger, PushBus, PushMessage } from '@seqline/core';
import type { PushConversations } from './push-conversations.ts';

export class PushPublisher {
  /** Per inbox, the last push still on its way (absent once it is out). */
  private readonly tails = new Map<InboxKey, Promise<void>>();

  constructor(
    private readonly push: PushBus,
    private readonly convs: PushConversations | undefined,
    private readonly logger: Logger,
  ) {}

  /** Never throws and never waits: the append is durable whatever becomes of its push. */
  publish(inbox: InboxKey, prevSeq: number, entries: Entry[], indexed?: IndexedConversations): void {
    if (this.convs === undefined) return this.send({ inbox, prevSeq, entries });
    const states = this.convs.states(inbox, entries, indexed); // never rejects
    const before = this.tails.get(inbox);
    if ('now' in states && before === undefined) return this.send(withConvs({ inbox, prevSeq, entries }, states.now));
    const sent = (async () => {
      const convs = 'now' in states ? states.now : await states.later;
      await before;
      this.send(withConvs({ inbox, prevSeq, entries }, convs));
    })();
    this.tails.set(inbox, sent);
    void sent.finally(() => {
      if (this.tails.get(inbox) === sent) this.tails.delete(inbox);
    });
  }

  /** Resolves once every push published so far is out. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values());
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
