import { v7 as uuidv7 } from 'uuid';
import { backoffDelay, DEFAULT_BUSY_BACKOFF, DEFAULT_RECONNECT_BACKOFF, sleep, type BackoffOptions } from './backoff.ts';
import { Connection } from './connection.ts';
import { GroupFollower, streamHints } from './group-follower.ts';
import { SeqlineClientError } from './errors.ts';
import { TypedEmitter, type Listener } from './events.ts';
import { silentClientLogger, type ClientLogger } from './logger.ts';
import { MemoryMaxSeqStore } from './max-seq-store.ts';
import { checkResult } from './results.ts';
import { SyncEngine } from './sync-engine.ts';
import type { GroupPushFrame, Obj, OpArgs, OpName, OpResult, PushFrame } from './wire.ts';
import type { ClientEvents, SendInput, SendOutcome, SeqlineClientOptions } from './client-options.ts';

export class SeqlineClient {
  private readonly events = new TypedEmitter<ClientEvents>();
  private readonly conn: Connection;
  private readonly engine: SyncEngine;
  private readonly follower: GroupFollower | null;
  private readonly logger: ClientLogger;
  private readonly requestTimeoutMs: number;
  private readonly maxResends: number;
  private readonly busyBackoff: BackoffOptions;
  private syncRetryTimer: ReturnType<typeof setTimeout> | null = null;
  private syncFailures = 0;
  private closed = false;

  constructor(opts: SeqlineClientOptions) {
    new URL(opts.url); // a malformed URL is a configuration error: fail now, not in a retry loop
    this.logger = opts.logger ?? silentClientLogger;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 5000;
    this.maxResends = opts.maxResends ?? 3;
    this.busyBackoff = opts.busyBackoff ?? DEFAULT_BUSY_BACKOFF;
    this.conn = new Connection({
      url: opts.url,
      token: opts.token,
      ...(opts.WebSocket ? { WebSocket: opts.WebSocket } : {}),
      ...(opts.tokenTransport ? { tokenTransport: opts.tokenTransport } : {}),
      reconnectBackoff: opts.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF,
      connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
      silentTimeoutsBeforeReconnect: opts.silentTimeoutsBeforeReconnect ?? 2,
      logger: this.logger,
      onOpen: () => this.onOpen(),
      onClose: () => {
        void this.emit('state', 'disconnected');
      },
      onPush: (push) => this.onPush(push),
      onGroupPush: (push) => this.onGroupPush(push),
    });
    this.follower =
      opts.followGroups === false
        ? null
        : new GroupFollower({
            fetchPage: (group, afterGseq, limit) => this.request('group.history', { group, afterGseq, limit }),
            // An ack of 0 never moves the cursor; its answer is where the cursor is.
            serverCursor: async (group) => (await this.request('group.ack', { group, gseq: 0 })).cursor,
            deliver: (group, messages) => this.emit('groupMessages', { group, messages }),
            pageLimit: opts.syncPageLimit ?? 200,
            logger: this.logger,
          });
    this.engine = new SyncEngine({
      store: opts.store ?? new MemoryMaxSeqStore(),
      pageLimit: opts.syncPageLimit ?? 200,
      fetchPage: (maxSeq, limit) => this.request('sync', { maxSeq, limit }),
      deliver: async (entries) => {
        await this.emit('entries', entries);
        for (const g of streamHints(entries)) this.follow(g, this.follower?.hint(g));
      },
      groups: async (groups) => {
        await this.emit('groups', groups);
        for (const g of groups) this.follow(g.id, this.follower?.news(g));
      },
      synced: (maxSeq) => {
        this.conn.markHealthy();
        this.syncFailures = 0;
        void this.emit('synced', { maxSeq });
      },
      logger: this.logger,
    });
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
  async send(input: SendInput): Promise<SendOutcome> {
    const appinfo = input.appinfo ?? uuidv7();
    const args: OpArgs<'send'> = { appinfo, to: input.to, type: input.type, body: input.body };
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await this.request('send', args);
        return { seq: r.seq, sendTime: r.sendTime, duplicate: r.duplicate, appinfo };
      } catch (err) {
        if (!(err instanceof SeqlineClientError) || attempt >= this.maxResends) throw err;
        if (err.busy) await sleep(backoffDelay(attempt + 1, this.busyBackoff));
        else if (!err.unanswered) throw err;
        this.logger.info({ appinfo, attempt: attempt + 1, code: err.code }, 'seqline: resending');
      }
    }
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

  history(beforeSeq: number, limit?: number): Promise<OpResult<'history'>> {
    return this.request('history', limit === undefined ? { beforeSeq } : { beforeSeq, limit });
  }

  read(seqs: number[]): Promise<OpResult<'read'>> {
    return this.request('read', { seqs });
  }

  recall(appinfo: string): Promise<OpResult<'recall'>> {
    return this.request('recall', { appinfo });
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
   * Renews the open socket's token before it expires (the server closes an expired socket with
   * 4401); `token` must be for the same user and tenant. Resolves with its `exp` (unix seconds).
   * A reconnect later uses the `token` option as before: make it a function to hand out fresh ones.
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
      },
      (err: unknown) => this.logger.error({ err }, 'seqline: push not applied'),
    );
  }

  private onGroupPush(push: GroupPushFrame): void {
    this.follow(push.group, this.follower?.push(push.group, push.prevGseq, push.messages));
  }

  /** Group catch-up runs beside the inbox sync; a failure is logged, the next news retries. */
  private follow(group: string, work: Promise<unknown> | undefined): void {
    work?.catch((err: unknown) => {
      if (!this.closed) this.logger.warn({ err, group }, 'seqline: following a group stream failed');
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
