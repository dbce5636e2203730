/**
 * The GroupStreamAppender of a process running several threads: thread i's GroupStreamWriter
 * allocates the gseqs of the groups in shards s ≡ i (mod threads) (threads-mesh.ts), and every
 * thread appends through this writer — in place for its own shards, by request over the thread
 * hub for the others (the `gappend` / `ghead` requests of RemoteGroupStreamWriter over NATS,
 * without their retries: a port loses nothing, and a thread gone fails its requests at once,
 * OVERLOADED, so the caller's retry of the whole call dedups what was stored).
 */
import { BadRequestError, DEFAULT_SHARD_COUNT, InternalError, OverloadedError, shardOf } from '@seqline/core';
import type { GroupAppend, GroupAppendOutcome, GroupKey, GroupStreamAppender, Logger, NewEntry } from '@seqline/core';
import type { ThreadChannel } from './threads-channel.ts';
import type { ThreadHub } from './threads-hub.ts';
import { threadOfShard } from './threads-mesh.ts';

export interface ThreadGroupStreamWriterOptions {
  hub: ThreadHub;
  /** Threads owning shards, numbered 0..threads-1 on the hub; a thread numbered past them only asks. */
  threads: number;
  /** This thread's GroupStreamWriter (for its shards); required on a thread owning shards. */
  owner?: GroupStreamAppender;
  /** Must equal the owners' shardCount. Default 64. */
  shardCount?: number;
  logger: Logger;
  /** Channel name on the hub. Default `gstream`. */
  channel?: string;
}

type GroupRequest = { op: 'append'; group: GroupKey; entries: NewEntry[] } | { op: 'head'; group: GroupKey };

export class ThreadGroupStreamWriter implements GroupStreamAppender {
  private readonly channel: ThreadChannel;
  private readonly shardCount: number;
  private closed = false;

  constructor(private readonly options: ThreadGroupStreamWriterOptions) {
    this.shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
    const self = options.hub.self;
    if (self < options.threads && options.owner === undefined)
      throw new InternalError(`thread ${self} owns shards but has no group writer`);
    this.channel = options.hub.open(options.channel ?? 'gstream', { onRequest: (body) => this.serve(body) });
  }

  append(input: GroupAppend): Promise<GroupAppendOutcome[]> {
    if (input.entries.length === 0) return Promise.resolve([]);
    const { group, entries } = input;
    return this.call({ op: 'append', group, entries }, (owner) => owner.append(input)) as Promise<GroupAppendOutcome[]>;
  }

  headSeq(group: GroupKey): Promise<number> {
    return this.call({ op: 'head', group }, (owner) => owner.headSeq(group)) as Promise<number>;
  }

  /**
   * Stops taking calls (later ones fail OVERLOADED) and other threads' requests (answered
   * OVERLOADED); resolves once every request sent or served here is answered. The owner and
   * the hub belong to the caller: close them after this.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.channel.close();
  }

  /** The thread owning the group's shard. */
  threadOf(group: GroupKey): number {
    return threadOfShard(shardOf(group, this.shardCount), this.options.threads);
  }

  private call(req: GroupRequest, here: (owner: GroupStreamAppender) => Promise<unknown>): Promise<unknown> {
    if (this.closed) return Promise.reject(new OverloadedError('group stream writer is closed, retry later'));
    const thread = this.threadOf(req.group);
    if (thread !== this.options.hub.self) return this.channel.request(thread, req);
    const owner = this.options.owner;
    return owner ? here(owner) : Promise.reject(new InternalError(`thread ${thread} owns shards but has no group writer`));
  }

  /** Another thread's call for a group of this thread's shards. */
  private serve(body: unknown): Promise<unknown> {
    const req = parseRequest(body);
    if (req === undefined) return Promise.reject(new BadRequestError('malformed group stream request'));
    const owner = this.options.owner;
    // Misrouted (the threads disagree on the count): the owner's own check names the shard.
    if (owner === undefined) return Promise.reject(new InternalError(`thread ${this.options.hub.self} owns no group shard`));
    return req.op === 'append' ? owner.append({ group: req.group, entries: req.entries }) : owner.headSeq(req.group);
  }
}

function parseRequest(body: unknown): GroupRequest | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const req = body as Record<string, unknown>;
  if (typeof req['group'] !== 'string') return undefined;
  if (req['op'] === 'head') return body as GroupRequest;
  const entries = req['entries'];
  const ok = Array.isArray(entries) && entries.every((e) => typeof e === 'object' && e !== null);
  return req['op'] === 'append' && ok ? (body as GroupRequest) : undefined;
}
