/**
 * The write side of read-fanout group streams for processes that own no shard: every call goes
 * to the owner of `shardOf(group)`, the one process whose GroupStreamWriter allocates that
 * group's gseqs, over NATS (ops `gappend` / `ghead` on the shard's subject), retried until a
 * deadline exactly like RemoteInboxWriter (see ShardRequester).
 */
import { InternalError } from '@seqline/core';
import type { GroupAppend, GroupAppendOutcome, GroupKey, GroupStreamAppender } from '@seqline/core';
import { ShardRequester } from './shard-requester.ts';
import type { RemoteWriterOptions } from './shard-requester.ts';

export type RemoteGroupStreamWriterOptions = RemoteWriterOptions;

export class RemoteGroupStreamWriter implements GroupStreamAppender {
  private readonly requester: ShardRequester;

  constructor(options: RemoteGroupStreamWriterOptions) {
    this.requester = new ShardRequester(options, 'remote-group-stream-writer', 'group stream owner');
  }

  /**
   * Entries go in order, in as many requests as NATS' payload limit needs; each new entry's
   * prevSeq is what the owner stored just before it. If a later request fails the earlier ones
   * stay written; the caller's retry of the whole call dedups them (no prevSeq for those).
   */
  async append({ group, entries }: GroupAppend): Promise<GroupAppendOutcome[]> {
    if (entries.length === 0) return [];
    const outcomes: GroupAppendOutcome[] = [];
    for (const { chunk, req, payload } of this.requester.appendRequests({ op: 'gappend', group }, entries)) {
      const reply = await this.requester.call(req, payload);
      if (reply.outcomes?.length !== chunk.length) throw new InternalError('group stream owner returned the wrong number of outcomes');
      for (const o of reply.outcomes) {
        if (!o.duplicate && o.prevSeq === undefined) throw new InternalError('group stream owner reply without prevSeq');
        outcomes.push(o.duplicate ? { seq: o.seq, duplicate: true } : { seq: o.seq, duplicate: false, prevSeq: o.prevSeq });
      }
    }
    return outcomes;
  }

  /** Ordered at the owner after every append it queued before this request. */
  async headSeq(group: GroupKey): Promise<number> {
    const reply = await this.requester.call({ op: 'ghead', group });
    if (reply.head === undefined) throw new InternalError('group stream owner reply without head');
    return reply.head;
  }

  /** The NATS connection belongs to the caller and stays open. */
  async close(): Promise<void> {
    this.requester.close();
  }
}
