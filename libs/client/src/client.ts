import { v7 as uuidv7 } from 'uuid';
import { backoffDelay, DEFAULT_BUSY_BACKOFF, type BackoffOptions } from './backoff.ts';
import type { Connection } from './connection.ts';
import type { ConversationSync, LoadConversationsOptions, MarkReadOutcome } from './conversation-sync.ts';
import type { GroupFollower } from './group-follower.ts';
import { SeqlineClientError } from './errors.ts';
import { TypedEmitter, type Listener } from './events.ts';
import { silentClientLogger, type ClientLogger } from './logger.ts';
import { withResends, type ResendPolicy } from './resend.ts';
import { checkResult } from './results.ts';
import type { SyncEngine } from './sync-engine.ts';
import type { Conv, Conversation, Json, Obj, OpArgs, OpName, OpResult, PushFrame } from './wire.ts';
import type { ClientEvents, SendInput, SendOutcome, SeqlineClientOptions } from './client-options.ts';
import { connectionOf, conversationSyncOf, groupFollowerOf, syncEngineOf, type ClientWiring } from './client-parts.ts';
import { sendOnce } from './send-once.ts';

export class SeqlineClient {
  private readonly events = new TypedEmitter<ClientEvents>();
  private readonly conn: Connection;
  private readonly engine: SyncEngine;
  private readonly follower: GroupFollower | null;
  private readonly convs: ConversationSync;
  private readonly logger: ClientLogger;
  private readonly requestTimeoutMs: number;
  private readonly busyBackoff: BackoffOptions;
  private readonly resendPolicy: ResendPolicy;
  private syncRetryTimer: ReturnType<typeof setTimeout> | null = null;
  private syncFailures = 0;
  private closed = false;

  constructor(opts: SeqlineClientOptions) {
    new URL(opts.url); // a malformed URL is a configuration error: fail now, not in a retry loop
    this.logger = opts.logger ?? silentClientLogger;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 5000;
    this.busyBackoff = opts.busyBackoff ?? DEFAULT_BUSY_BACKOFF;
    this.resendPolicy = { maxResends: opts.maxResends ?? 3, busyBackoff: this.busyBackoff, logger: this.logger };
    this.conn = connectionOf(opts, this.logger, {
      onOpen: () => this.onOpen(),
      onClose: () => void this.emit('state', 'disconnected'),
      onPush: (push) => this.onPush(push),
      onKicked: (by) => void this.emit('kicked', { by }).then(() => this.close()),
      onGroupPush: (push) => this.follow(push.group, this.follower?.push(push.group, push.prevGseq, push.messages)),
    });
    const wiring: ClientWiring = {
      request: (op, args) => this.request(op, args),
      emit: (e, arg) => this.emit(e, arg),
      follow: (what, work) => this.follow(what, work),
      logger: this.logger,
    };
    this.convs = conversationSyncOf(opts, wiring);
    this.follower = groupFollowerOf(opts, wiring);
    const synced = (maxSeq: number): void => {
      this.conn.markHealthy();
      this.syncFailures = 0;
      void this.emit('synced', { maxSeq });
    };
    this.engine = syncEngineOf(opts, wiring, { convs: this.convs, follower: this.follower, synced });
  }

  on<K extends keyof ClientEvents>(event: K, listener: Listener<ClientEvents[K]>): () => void {
    return this.events.on(event, listener);
  }

  off<K extends keyof ClientEvents>(event: K, listener: Listener<ClientEvents[K]>): void {
    this.events.off(event, listener);
  }

  /** Highest inbox seq handed to `entries` listeners. */
  get maxSeq(): number {
    return this.engine.currentMaxSeq;
  }

  get connected(): boolean {
    return this.conn.isOpen;
  }

  /** Picks the WebSocket (CONFIG error if none), loads max seq, then resolves once connected; a catch-up sync starts on every (re)connect. */
  async connect(): Promise<void> {
    if (this.closed) throw new SeqlineClientError('CLOSED', 'client closed');
    await this.conn.prepare();
    await this.engine.load();
    await this.conn.start();
  }

  /** Stops for good: no reconnect, pending requests reject with CLOSED. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.syncRetryTimer) clearTimeout(this.syncRetryTimer);
    this.conn.stop();
    void this.emit('state', 'closed');
  }

  /** Syncs from max seq until the server has nothing newer; joins a sync already running. */
  syncNow(): Promise<void> {
    return this.engine.syncNow();
  }

  /**
   * Sends a message, exactly once: an unanswered attempt (timeout, disconnect) is resent with
   * the same appinfo, which the server stores at most once (`duplicate: true` then).
   */
  send(input: SendInput): Promise<SendOutcome> {
    return sendOnce((args) => this.request('send', args), this.resendPolicy, input);
  }

  /** One typed call, one attempt; the result is shape-checked (PROTOCOL error otherwise). */
  async request<O extends OpName>(op: O, args: OpArgs<O>): Promise<OpResult<O>> {
    const raw = await this.conn.request(op, args, this.requestTimeoutMs);
    const result = checkResult(op, raw);
    if (!result) throw new SeqlineClientError('PROTOCOL', `${op}: reply does not have the expected shape`);
    return result;
  }

  /** An op this SDK does not know (project extensions); the result is not checked. */
  requestRaw(op: string, args: object): Promise<Obj> {
    return this.conn.request(op, args, this.requestTimeoutMs);
  }

  /** One raw sync page; does not move max seq (use syncNow / the entries event for that). */
  sync(maxSeq: number, limit?: number): Promise<OpResult<'sync'>> {
    return this.request('sync', limit === undefined ? { maxSeq } : { maxSeq, limit });
  }

  /** One page of older entries: of the whole inbox, or of one conversation. */
  history(beforeSeq: number, limit?: number): Promise<OpResult<'history'>>;
  history(conv: Conv, page?: { beforeSeq?: number; limit?: number }): Promise<OpResult<'history'>>;
  history(at: number | Conv, page?: number | { beforeSeq?: number; limit?: number }): Promise<OpResult<'history'>> {
    const limit = typeof page === 'number' ? { limit: page } : {};
    return this.request(
      'history',
      typeof at === 'number' ? { beforeSeq: at, ...limit } : { conv: at, ...(typeof page === 'object' ? page : {}) },
    );
  }

  /** Marks these entries read (their senders get receipts). See markRead for conversations. */
  read(seqs: number[]): Promise<OpResult<'read'>> {
    return this.request('read', { seqs });
  }

  /** The conversation list, newest activity first: the server's states, kept current by sync and pushes. */
  conversations(): Conversation[] {
    return this.convs.store.list();
  }

  /**
   * A fresh device's bootstrap: the newest conversations (with their last messages if asked) in one call; max seq
   * then jumps to its headSeq and sync goes on from there instead of replaying the inbox from 0. Call it before
   * `connect()` so the first sync waits for it. With `beforeLastSeq` it pages older conversations, max seq stays.
   */
  loadConversations(opts: LoadConversationsOptions = {}): Promise<OpResult<'conversations'>> {
    if (opts.beforeLastSeq !== undefined) return this.convs.load(opts);
    return this.engine.bootstrap(() => this.convs.load(opts));
  }

  /** Reads a conversation up to `upToSeq` (default: its lastSeq here); the cursor never moves back. */
  markRead(conv: Conv, upToSeq?: number): Promise<MarkReadOutcome> {
    return this.convs.markRead(conv, upToSeq);
  }

  /** Deletes entries for this user only, on every device of theirs (`hidden` fires there). */
  deleteForMe(seqs: number[]): Promise<OpResult<'delete'>> {
    return this.request('delete', { seqs });
  }

  /** Clears a conversation's history for this user, up to `upToSeq` (default: all of it). */
  clear(conv: Conv, upToSeq?: number): Promise<OpResult<'clear'>> {
    return this.request('clear', upToSeq === undefined ? { conv } : { conv, upToSeq });
  }

  /**
   * Edits one's own message (same window as recall; anyone else's is FORBIDDEN), exactly once:
   * the edit carries an `editId` (a UUIDv7 unless given), and an unanswered attempt is resent
   * with the same one, which the server applies at most once. Pass the same editId to resume
   * an edit after a crash.
   */
  edit(appinfo: string, body: Json, type?: string, editId: string = uuidv7()): Promise<OpResult<'edit'>> {
    const args: OpArgs<'edit'> = type === undefined ? { appinfo, body, editId } : { appinfo, body, type, editId };
    return withResends(() => this.request('edit', args), this.resendPolicy, { appinfo, editId });
  }

  /** Recalls `from`'s message `appinfo`: your own by default; a group admin names the member. */
  recall(appinfo: string, from?: string): Promise<OpResult<'recall'>> {
    return this.request('recall', from === undefined ? { appinfo } : { appinfo, from });
  }

  createGroup(args: OpArgs<'group.create'>): Promise<OpResult<'group.create'>> {
    return this.request('group.create', args);
  }

  addMembers(group: string, members: string[]): Promise<OpResult<'group.add'>> {
    return this.request('group.add', { group, members });
  }

  removeMembers(group: string, members: string[]): Promise<OpResult<'group.remove'>> {
    return this.request('group.remove', { group, members });
  }

  /** Admin only: renames the group; every member's conversation `title` follows. */
  renameGroup(group: string, name: string): Promise<OpResult<'group.rename'>> {
    return this.request('group.rename', { group, name });
  }

  groupInfo(group: string): Promise<OpResult<'group.info'>> {
    return this.request('group.info', { group });
  }

  groupHistory(args: OpArgs<'group.history'>): Promise<OpResult<'group.history'>> {
    return this.request('group.history', args);
  }

  groupAck(group: string, gseq: number): Promise<OpResult<'group.ack'>> {
    return this.request('group.ack', { group, gseq });
  }

  /**
   * Renews the open socket's token (same user and tenant) before its `exp` closes it (4401);
   * resolves with the new `exp`. A reconnect asks the `token` option as before.
   */
  auth(token: string): Promise<OpResult<'auth'>> {
    return this.request('auth', { token });
  }

  /** Last gseq of a read-fanout group delivered through `groupMessages` in this session. */
  groupPosition(group: string): number | undefined {
    return this.follower?.position(group);
  }

  /** Pages a read-fanout group from the last delivered gseq to its head (through `groupMessages`). */
  async followGroup(group: string): Promise<void> {
    await this.follower?.hint(group);
  }

  private onOpen(): void {
    void this.emit('state', 'connected');
    this.triggerSync();
  }

  private onPush(push: PushFrame): void {
    this.engine.handlePush(push.prevSeq, push.entries).then(
      (outcome) => {
        this.logger.debug({ prevSeq: push.prevSeq, count: push.entries.length, outcome }, 'seqline: push');
        if (outcome === 'gap' || outcome === 'invalid') this.triggerSync();
        else if (outcome === 'applied') this.follow('conversations', this.convs.push(push)); // a gap's sync brings the states itself
      },
      (err: unknown) => this.logger.error({ err }, 'seqline: push not applied'),
    );
  }

  /** Group catch-up and conversation refreshes run beside the inbox sync; a failure is logged, the next news retries. */
  private follow(what: string, work: Promise<unknown> | undefined): void {
    work?.catch((err: unknown) => {
      if (!this.closed) this.logger.warn({ err, what }, 'seqline: following a group stream or conversations failed');
    });
  }

  /** Background sync: failures while connected are retried with backoff; a reconnect syncs anyway. */
  private triggerSync(): void {
    this.engine.syncNow().catch((err: unknown) => {
      if (this.closed) return;
      this.syncFailures += 1;
      const code = err instanceof SeqlineClientError ? err.code : 'UNKNOWN';
      this.logger.warn({ err, code, failures: this.syncFailures }, 'seqline: sync failed');
      if (!this.conn.isOpen || this.syncRetryTimer) return;
      this.syncRetryTimer = setTimeout(
        () => {
          this.syncRetryTimer = null;
          if (!this.closed) this.triggerSync();
        },
        backoffDelay(this.syncFailures, this.busyBackoff),
      );
    });
  }

  /** Emits to listeners in order; a throwing listener is logged and does not stop the others. */
  private async emit<K extends keyof ClientEvents>(event: K, arg: ClientEvents[K]): Promise<void> {
    const failures = await this.events.emitSerial(event, arg);
    for (const err of failures) this.logger.error({ err, event }, 'seqline: listener failed');
  }
}
