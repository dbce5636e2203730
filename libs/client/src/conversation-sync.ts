import { SeqlineClientError } from './errors.ts';
import type { ClientEvents } from './client-options.ts';
import { ConversationStore, convKey, touchesConversations } from './conversation-store.ts';
import type { Conv, Conversation, Entry, OpArgs, OpName, OpResult, PushFrame } from './wire.ts';

export interface ConversationSyncOptions {
  request<O extends OpName>(op: O, args: OpArgs<O>): Promise<OpResult<O>>;
  emit<K extends keyof ClientEvents>(event: K, arg: ClientEvents[K]): Promise<void>;
  /** Refresh from sync when a push comes without `convs`. */
  track: boolean;
}

export interface LoadConversationsOptions {
  /** Conversations per page (server default 50, max 500). */
  limit?: number;
  /** Also return each conversation's last N visible messages (0–50) in `messages`. */
  lastMessages?: number;
  /** Page on: conversations whose lastSeq is below this (the last one's lastSeq of the previous page). */
  beforeLastSeq?: number;
}

/** What `markRead` moved: an inbox read entry (`seq`), or a read-fanout group cursor. */
export type MarkReadOutcome = { seq: number } | { cursor: number };

/**
 * The conversation half of the client: feeds the store from every server answer that carries
 * states (sync pages, pushes, `conversations`), turns `delete` / `clear` / `edit` entries into
 * events, and runs the conversation ops. Counts always come from the server, exact at their asOfSeq.
 */
export class ConversationSync {
  readonly store = new ConversationStore();
  /** The server has answered with conversation states (a server that predates them never does: no refreshes then). */
  private serverTracks = false;

  constructor(private readonly opts: ConversationSyncOptions) {}

  /** Takes the newer of these states; emits `conversations` when the list changed. */
  async apply(states: readonly Conversation[]): Promise<void> {
    this.serverTracks = true;
    if (this.store.apply(states)) await this.opts.emit('conversations', this.store.list());
  }

  /** After `entries` was emitted: the control entries that change what the app shows. */
  async entries(entries: readonly Entry[]): Promise<void> {
    for (const e of entries) {
      if (e.kind === 'delete' && e.seqs !== undefined) {
        await this.opts.emit('hidden', { by: 'delete', seq: e.seq, seqs: e.seqs });
      } else if (e.kind === 'clear') {
        await this.opts.emit('hidden', { by: 'clear', seq: e.seq, conv: e.conv, upToSeq: e.upToSeq ?? null });
      } else if (e.kind === 'edit' && e.edit !== undefined) {
        await this.opts.emit('edited', { seq: e.seq, conv: e.conv, from: e.from, edit: e.edit });
      }
    }
  }

  /**
   * A push's states; without them (the server may leave them out), or when one the entries
   * name is missing or older than them, a raw sync page over the pushed range returns the
   * touched conversations' states. It does not move max seq.
   */
  async push(push: PushFrame): Promise<void> {
    if (push.convs !== undefined) {
      await this.apply(push.convs);
      if (!lacksState(push.entries, push.convs)) return;
    }
    if (!this.opts.track || !this.serverTracks || !touchesConversations(push.entries)) return;
    const page = await this.opts.request('sync', { maxSeq: push.prevSeq, limit: push.entries.length });
    if (page.convs !== undefined) await this.apply(page.convs);
  }

  async load(opts: LoadConversationsOptions): Promise<OpResult<'conversations'>> {
    const result = await this.opts.request('conversations', opts);
    await this.apply(result.convs);
    return result;
  }

  /**
   * Moves the conversation's read cursor to `upToSeq`, by default its lastSeq as the client
   * knows it. A read-fanout group (a state with `readGseq`) moves its group cursor instead; the server
   * then also reads the group's inbox side (its mention copies).
   */
  async markRead(conv: Conv, upToSeq?: number): Promise<MarkReadOutcome> {
    const state = this.store.get(conv);
    if (conv.type === 'group' && state?.readGseq !== undefined && state.lastGseq !== undefined) {
      return this.opts.request('group.ack', { group: conv.id, gseq: upToSeq ?? state.lastGseq });
    }
    const upTo = upToSeq ?? state?.lastSeq;
    if (upTo === undefined) {
      throw new SeqlineClientError('BAD_REQUEST', `markRead: ${conv.type} ${conv.id} is not in the conversation list; pass upToSeq`);
    }
    return this.opts.request('read', { conv, upToSeq: upTo });
  }
}

/**
 * Whether a conversation an entry names itself (a message, a group notice, a conversation
 * read, a clear, a recall, an edit) has no state in `convs` as new as that entry. A delete or
 * a read by seqs names seqs, whose conversations only the server knows: it sends all or none.
 */
function lacksState(entries: readonly Entry[], convs: readonly Conversation[]): boolean {
  const asOf = new Map(convs.map((c) => [convKey(c.conv), c.asOfSeq]));
  return entries.some((e) => namesItsConversation(e) && (asOf.get(convKey(e.conv)) ?? -1) < e.seq);
}

function namesItsConversation(e: Entry): boolean {
  if (e.kind === 'group') return e.type !== 'group.tier';
  return (
    e.kind === 'msg' || e.kind === 'clear' || e.kind === 'recall' || e.kind === 'edit' || (e.kind === 'read' && e.upToSeq !== undefined)
  );
}
