/**
 * InboxWriter for processes that own no shard (gateways, fanout workers): every call goes to
 * the shard's owner over NATS request/reply, retried until a deadline (see ShardRequester).
 */
import { InternalError, runFollowUp, silentLogger } from '@seqline/core';
import type {
  AppendOutcome,
  ChainedAppend,
  ConversationRebuildReport,
  InboxAppend,
  InboxAppendThen,
  InboxKey,
  InboxReceipt,
  InboxWriter,
  Logger,
} from '@seqline/core';
import { ShardRequester } from './shard-requester.ts';
import type { OkReply, RemoteWriterOptions } from './shard-requester.ts';
import { encodeJson, MAX_FOLLOW_UP_MS } from './wire.ts';
import type { ShardRequest } from './wire.ts';

export type RemoteInboxWriterOptions = RemoteWriterOptions & {
  /** One rebuild request's timeout: a rebuild replays the whole inbox. Default 60 s. */
  rebuildTimeoutMs?: number;
};

export class RemoteInboxWriter implements InboxWriter {
  private readonly requester: ShardRequester;
  /** Rebuilds wait far longer than appends (its reply subscription is made on first use only). */
  private readonly rebuilds: ShardRequester;
  private readonly logger: Logger;

  constructor(options: RemoteInboxWriterOptions) {
    this.requester = new ShardRequester(options, 'remote-inbox-writer', 'inbox owner');
    const rebuildTimeoutMs = options.rebuildTimeoutMs ?? 60_000;
    this.rebuilds = new ShardRequester(
      { ...options, requestTimeoutMs: rebuildTimeoutMs, deadlineMs: rebuildTimeoutMs + (options.deadlineMs ?? 20_000) },
      'remote-inbox-writer',
      'inbox owner',
    );
    this.logger = (options.logger ?? silentLogger).child({ component: 'remote-inbox-writer' });
  }

  /**
   * Entries go in order, in as many requests as NATS' payload limit needs. If a later request
   * fails the earlier ones stay written; the caller's retry of the whole call dedups them.
   */
  async append({ inbox, entries }: InboxAppend): Promise<AppendOutcome[]> {
    if (entries.length === 0) return [];
    const outcomes: AppendOutcome[] = [];
    for (const { chunk, req, payload } of this.requester.appendRequests({ op: 'append', inbox }, entries)) {
      outcomes.push(...outcomesOf(await this.requester.call(req, payload), chunk.length));
    }
    return outcomes;
  }

  /**
   * One request when both appends fit in one: the first inbox's owner runs the follow-up and
   * says how it went (see wire.ts). Otherwise the two go as separate calls from here.
   */
  async appendThen({ inbox, entries, next }: InboxAppendThen): Promise<ChainedAppend> {
    const req: ShardRequest = { op: 'append', inbox, entries, then: next };
    // The cheap checks first: the payload is encoded only for a request that may be sent.
    const payload =
      entries.length > 0 &&
      entries.length + next.entries.length <= this.requester.maxEntriesPerRequest &&
      next.timeoutMs <= MAX_FOLLOW_UP_MS
        ? encodeJson(req)
        : undefined;
    if (payload !== undefined && payload.length <= this.requester.payloadBudget()) {
      const reply = await this.requester.call(req, payload);
      const outcomes = outcomesOf(reply, entries.length);
      // Every owner answers a `then` (chainAppends always settles it): a reply without one is malformed.
      if (reply.then === undefined) throw new InternalError('inbox owner reply without then');
      return { outcomes, next: reply.then };
    }
    const outcomes = await this.append({ inbox, entries });
    return { outcomes, next: await runFollowUp(outcomes, next, (input) => this.append(input), this.logger) };
  }

  async addReceipt({ inbox, appinfo, readers }: InboxReceipt): Promise<void> {
    if (readers.length === 0) return;
    await this.requester.call({ op: 'receipt', inbox, appinfo, readers });
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    const reply = await this.requester.call({ op: 'head', inbox });
    if (reply.head === undefined) throw new InternalError('inbox owner reply without head');
    return reply.head;
  }

  /**
   * Run by the shard's owner in the inbox's queue. A retry after a lost reply rebuilds again
   * and then reports no difference: the first rebuild already fixed it.
   */
  async rebuildConversations(inbox: InboxKey): Promise<ConversationRebuildReport> {
    const reply = await this.rebuilds.call({ op: 'rebuild', inbox });
    if (reply.rebuild === undefined) throw new InternalError('inbox owner reply without rebuild');
    return reply.rebuild;
  }

  /** The NATS connection belongs to the caller and stays open. */
  async close(): Promise<void> {
    this.requester.close();
    this.rebuilds.close();
  }
}

function outcomesOf(reply: OkReply, expected: number): AppendOutcome[] {
  if (reply.outcomes?.length !== expected) throw new InternalError('inbox owner returned the wrong number of outcomes');
  // No prevSeq: an inbox append has none, whatever the owner sent.
  return reply.outcomes.map(({ seq, duplicate, original }) => (original === undefined ? { seq, duplicate } : { seq, duplicate, original }));
}
