/**
 * InboxWriter for processes that own no shard (gateways, fanout workers): every call goes to
 * the shard's owner over NATS request/reply, retried until a deadline (see ShardRequester).
 */
import { InternalError } from '@seqline/core';
import type { AppendOutcome, InboxKey, InboxWriter, NewEntry } from '@seqline/core';
import { ShardRequester } from './shard-requester.ts';
import type { RemoteWriterOptions } from './shard-requester.ts';

export type RemoteInboxWriterOptions = RemoteWriterOptions;

export class RemoteInboxWriter implements InboxWriter {
  private readonly requester: ShardRequester;

  constructor(options: RemoteInboxWriterOptions) {
    this.requester = new ShardRequester(options, 'remote-inbox-writer', 'inbox owner');
  }

  /**
   * Entries go in order, in as many requests as NATS' payload limit needs. If a later request
   * fails the earlier ones stay written; the caller's retry of the whole call dedups them.
   */
  async append(inbox: InboxKey, entries: NewEntry[]): Promise<AppendOutcome[]> {
    if (entries.length === 0) return [];
    const outcomes: AppendOutcome[] = [];
    for (const { chunk, req, payload } of this.requester.appendRequests({ op: 'append', inbox }, entries)) {
      const reply = await this.requester.call(req, payload);
      if (reply.outcomes?.length !== chunk.length) throw new InternalError('inbox owner returned the wrong number of outcomes');
      // Only seq and duplicate: an inbox append has no prevSeq, whatever the owner sent.
      outcomes.push(...reply.outcomes.map(({ seq, duplicate }) => ({ seq, duplicate })));
    }
    return outcomes;
  }

  async addReceipt(inbox: InboxKey, appinfo: string, readers: string[]): Promise<void> {
    if (readers.length === 0) return;
    await this.requester.call({ op: 'receipt', inbox, appinfo, readers });
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    const reply = await this.requester.call({ op: 'head', inbox });
    if (reply.head === undefined) throw new InternalError('inbox owner reply without head');
    return reply.head;
  }

  /** The NATS connection belongs to the caller and stays open. */
  async close(): Promise<void> {
    this.requester.close();
  }
}
