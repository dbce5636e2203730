/**
 * How an inbox owner publishes the push of an append: at once without a conversation index;
 * with one, after a bounded read of the touched conversations' states (PushConversations). The
 * pushes of one inbox leave in append order even then — a read that finishes early waits for
 * the push before it — so a client never sees a prevSeq gap the owner made.
 */
import type { Entry, InboxKey, Logger, PushBus, PushMessage } from '@seqline/core';
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
  publish(inbox: InboxKey, prevSeq: number, entries: Entry[]): void {
    if (this.convs === undefined) return this.send({ inbox, prevSeq, entries });
    const reading = this.convs.read(inbox, entries); // never rejects
    const before = this.tails.get(inbox);
    const sent = (async () => {
      const convs = await reading;
      await before;
      this.send(convs === undefined ? { inbox, prevSeq, entries } : { inbox, prevSeq, entries, convs });
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
