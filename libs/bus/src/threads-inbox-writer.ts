/**
 * The InboxWriter of a process running several threads: thread i's InboxOwner writes the shards
 * s ≡ i (mod threads) (threads-mesh.ts), and every thread writes any inbox through this writer —
 * in place for its own shards, by request over the thread hub for the others (the request/reply
 * of `inbox.append.<shard>` over NATS, without its retries: a port loses nothing, and a thread
 * gone fails its requests at once, OVERLOADED). An `appendThen` runs at the first inbox's owner,
 * which routes the follow-up alike, so a 1:1 send is one request when the two inboxes live apart.
 */
import { BadRequestError, chainAppends, InternalError, OverloadedError, runFollowUp, shardOf, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type {
  AppendOutcome,
  ChainedAppend,
  ConversationRebuildReport,
  FollowUpAppend,
  InboxAppend,
  InboxAppendThen,
  InboxKey,
  InboxReceipt,
  InboxWriter,
  Logger,
  NewEntry,
  OwnerAppend,
} from '@seqline/core';
import type { ThreadChannel } from './threads-channel.ts';
import type { ThreadHub } from './threads-hub.ts';
import { threadOfShard } from './threads-mesh.ts';

/** This thread's owner of its shards (@seqline/seq's InboxOwner): it may say when an append is durable. */
export interface ShardsOwner extends InboxWriter {
  append(input: OwnerAppend): Promise<AppendOutcome[]>;
}

export interface ThreadInboxWriterOptions {
  hub: ThreadHub;
  /** Threads owning shards, numbered 0..threads-1 on the hub; a thread numbered past them only asks. */
  threads: number;
  /** This thread's owner; required on a thread owning shards. */
  owner?: ShardsOwner;
  /** Must equal the owners' shardCount. Default 64. */
  shardCount?: number;
  logger: Logger;
  /** Channel name on the hub. Default `inbox`. */
  channel?: string;
}

type WriteRequest =
  | { op: 'append'; inbox: InboxKey; entries: NewEntry[] }
  | { op: 'appendThen'; inbox: InboxKey; entries: NewEntry[]; next: FollowUpAppend }
  | { op: 'receipt'; inbox: InboxKey; appinfo: string; readers: string[] }
  | { op: 'head'; inbox: InboxKey }
  | { op: 'rebuild'; inbox: InboxKey };

export class ThreadInboxWriter implements InboxWriter {
  private readonly channel: ThreadChannel;
  private readonly shardCount: number;
  private readonly logger: Logger;
  private closed = false;

  constructor(private readonly options: ThreadInboxWriterOptions) {
    this.shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
    this.logger = options.logger.child({ component: 'thread-inbox-writer' });
    const self = options.hub.self;
    if (self < options.threads && options.owner === undefined) throw new InternalError(`thread ${self} owns shards but has no owner`);
    this.channel = options.hub.open(options.channel ?? 'inbox', { onRequest: (body) => this.serve(body) });
  }

  append(input: InboxAppend): Promise<AppendOutcome[]> {
    const { inbox, entries } = input;
    if (entries.length === 0) return Promise.resolve([]);
    // The request names its fields: only data crosses to another thread.
    return this.call({ op: 'append', inbox, entries }, (owner) => owner.append(input)) as Promise<AppendOutcome[]>;
  }

  appendThen(input: InboxAppendThen): Promise<ChainedAppend> {
    const { next, ...first } = input;
    const { inbox, entries } = first;
    return this.call({ op: 'appendThen', inbox, entries, next }, (owner) =>
      chainAppends(
        // The owner's own append: it hears the first append whole, and says when it is durable.
        (durable) => owner.append({ ...first, durable }),
        // The follow-up goes wherever its inbox lives: in place, or to its thread.
        (outcomes) => runFollowUp(outcomes, next, (input) => this.append(input), this.logger),
      ),
    ) as Promise<ChainedAppend>;
  }

  async addReceipt(input: InboxReceipt): Promise<void> {
    const { inbox, appinfo, readers } = input;
    if (readers.length === 0) return;
    await this.call({ op: 'receipt', inbox, appinfo, readers }, (owner) => owner.addReceipt(input));
  }

  headSeq(inbox: InboxKey): Promise<number> {
    return this.call({ op: 'head', inbox }, (owner) => owner.headSeq(inbox)) as Promise<number>;
  }

  rebuildConversations(inbox: InboxKey): Promise<ConversationRebuildReport> {
    return this.call({ op: 'rebuild', inbox }, (owner) => owner.rebuildConversations(inbox)) as Promise<ConversationRebuildReport>;
  }

  /**
   * Stops taking calls (later ones fail OVERLOADED) and other threads' requests (answered
   * OVERLOADED), and resolves once every request sent or served here is answered. The owner
   * and the hub belong to the caller: close them after this.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.channel.close();
  }

  /** The thread owning the inbox's shard. */
  threadOf(inbox: InboxKey): number {
    return threadOfShard(shardOf(inbox, this.shardCount), this.options.threads);
  }

  private call(req: WriteRequest, here: (owner: ShardsOwner) => Promise<unknown>): Promise<unknown> {
    if (this.closed) return Promise.reject(new OverloadedError('inbox writer is closed, retry later'));
    const thread = this.threadOf(req.inbox);
    if (thread !== this.options.hub.self) return this.channel.request(thread, req);
    const owner = this.options.owner;
    return owner ? here(owner) : Promise.reject(new InternalError(`thread ${thread} owns shards but has no owner`));
  }

  /** Another thread's call for an inbox of this thread's shards. */
  private serve(body: unknown): Promise<unknown> {
    const req = parseRequest(body);
    if (req === undefined) return Promise.reject(new BadRequestError('malformed inbox write request'));
    const owner = this.options.owner;
    // Misrouted (the threads disagree on the count): the owner's own check names the shard.
    if (owner === undefined) return Promise.reject(new InternalError(`thread ${this.options.hub.self} owns no shard`));
    switch (req.op) {
      case 'append':
        return owner.append({ inbox: req.inbox, entries: req.entries });
      case 'appendThen':
        return this.appendThen({ inbox: req.inbox, entries: req.entries, next: req.next });
      case 'receipt':
        return owner.addReceipt({ inbox: req.inbox, appinfo: req.appinfo, readers: req.readers }).then(() => null);
      case 'head':
        return owner.headSeq(req.inbox);
      case 'rebuild':
        return owner.rebuildConversations(req.inbox);
    }
  }
}

function parseRequest(body: unknown): WriteRequest | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const req = body as Record<string, unknown>;
  if (typeof req['inbox'] !== 'string') return undefined;
  const entries = Array.isArray(req['entries']) && req['entries'].every((e) => typeof e === 'object' && e !== null);
  switch (req['op']) {
    case 'append':
      return entries ? (body as WriteRequest) : undefined;
    case 'appendThen': {
      const next = req['next'] as Record<string, unknown> | null;
      const ok = typeof next === 'object' && next !== null && typeof next['inbox'] === 'string' && Array.isArray(next['entries']);
      return entries && ok && typeof next['timeoutMs'] === 'number' ? (body as WriteRequest) : undefined;
    }
    case 'receipt':
      return typeof req['appinfo'] === 'string' && isStrings(req['readers']) ? (body as WriteRequest) : undefined;
    case 'head':
    case 'rebuild':
      return body as WriteRequest;
    default:
      return undefined;
  }
}

function isStrings(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}
