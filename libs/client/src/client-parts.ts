/**
 * The parts SeqlineClient is built from: its connection (with the client's defaults), its
 * conversations, the group follower and the sync engine, wired to the client's typed request,
 * its serial emit and its follow.
 */
import { DEFAULT_RECONNECT_BACKOFF } from './backoff.ts';
import type { ClientEvents, SeqlineClientOptions } from './client-options.ts';
import { Connection, type ConnectionOptions } from './connection.ts';
import { ConversationSync } from './conversation-sync.ts';
import { GroupFollower, streamHints } from './group-follower.ts';
import type { ClientLogger } from './logger.ts';
import { MemoryMaxSeqStore } from './max-seq-store.ts';
import { SyncEngine } from './sync-engine.ts';
import type { OpArgs, OpName, OpResult } from './wire.ts';

/** What the parts call back into: the client's request and emit, where work beside the inbox sync runs, its logger. */
export interface ClientWiring {
  request<O extends OpName>(op: O, args: OpArgs<O>): Promise<OpResult<O>>;
  emit<K extends keyof ClientEvents>(event: K, arg: ClientEvents[K]): Promise<void>;
  follow(what: string, work: Promise<unknown> | undefined): void;
  logger: ClientLogger;
}

/** What the connection tells the client. */
export type ConnectionHandlers = Pick<ConnectionOptions, 'onOpen' | 'onClose' | 'onPush' | 'onKicked' | 'onGroupPush'>;

/** The connection, with the client's defaults for what the options leave out. */
export function connectionOf(opts: SeqlineClientOptions, logger: ClientLogger, handlers: ConnectionHandlers): Connection {
  return new Connection({
    ...opts, // url, token, WebSocket, tokenTransport, device
    reconnectBackoff: opts.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    silentTimeoutsBeforeReconnect: opts.silentTimeoutsBeforeReconnect ?? 2,
    logger,
    ...handlers,
  });
}

/** The conversation half of the client (tracking unless `trackConversations: false`). */
export function conversationSyncOf(opts: SeqlineClientOptions, w: ClientWiring): ConversationSync {
  const track = opts.trackConversations ?? true;
  return new ConversationSync({ request: (op, args) => w.request(op, args), emit: (e, arg) => w.emit(e, arg), track });
}

/** The group follower, or null when the client does not follow read-fanout groups. */
export function groupFollowerOf(opts: SeqlineClientOptions, w: ClientWiring): GroupFollower | null {
  return opts.followGroups === false
    ? null
    : new GroupFollower({
        fetchPage: (group, afterGseq, limit) => w.request('group.history', { group, afterGseq, limit }),
        // An ack of 0 never moves the cursor; its answer is where the cursor is.
        serverCursor: async (group) => (await w.request('group.ack', { group, gseq: 0 })).cursor,
        deliver: (group, messages) => w.emit('groupMessages', { group, messages }),
        pageLimit: opts.syncPageLimit ?? 200,
        logger: w.logger,
      });
}

/** The sync engine: its pages go to the `entries` listeners, then to the conversations and the group follower. */
export function syncEngineOf(
  opts: SeqlineClientOptions,
  w: ClientWiring,
  parts: { convs: ConversationSync; follower: GroupFollower | null; synced: (maxSeq: number) => void },
): SyncEngine {
  return new SyncEngine({
    store: opts.store ?? new MemoryMaxSeqStore(),
    pageLimit: opts.syncPageLimit ?? 200,
    fetchPage: (maxSeq, limit) => w.request('sync', { maxSeq, limit }),
    deliver: async (entries) => {
      await w.emit('entries', entries);
      await parts.convs.entries(entries);
      for (const g of streamHints(entries)) w.follow(g, parts.follower?.hint(g));
    },
    convs: (states) => parts.convs.apply(states),
    groups: async (groups) => {
      await w.emit('groups', groups);
      for (const g of groups) w.follow(g.id, parts.follower?.news(g));
    },
    synced: parts.synced,
    logger: w.logger,
  });
}
