/**
 * Seqline as a system of the peers bench, embedded (`npm start` as a child) or distributed (see
 * seqline-distributed.ts): the bench's protocol client (ws-client.ts) behind the peers interface.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { messageBody } from '../fixtures.ts';
import { servicePid, sleep, startSeqlineChild, tempDir } from '../support.ts';
import { BenchClient, tokenFor } from '../ws-client.ts';
import { scheduleLikeTheOthers } from './processes.ts';
import type { CatchUpMark, CatchUpResult, PeerClient, PeerSystem, Proc, Sent } from './system.ts';

/** Rate limits out of the way: the bench measures delivery, not the per-user token bucket. */
export const UNLIMITED = { SEQLINE_RATE_PER_SEC: '1000000', SEQLINE_RATE_BURST: '1000000' };
/** Ids per group.create / group.add frame (a frame is at most 66 KiB). */
const MEMBER_CHUNK = 2000;
/** The most a sync page holds (larger limits are clamped). */
const SYNC_PAGE = 1000;

type Json = Record<string, unknown>;

export class SeqlinePeer implements PeerClient {
  onMessage: ((id: string | undefined, at: number) => void) | undefined;
  /** Groups this user has received an entry of (their creation or the user's addition). */
  readonly groupsSeen = new Set<string>();

  constructor(readonly client: BenchClient) {
    client.onPush = (frame, at) => {
      for (const entry of frame.entries) {
        if (entry.conv.type === 'group') this.groupsSeen.add(entry.conv.id);
        this.onMessage?.(entry.appinfo, at);
      }
    };
    // The lean client counts a group.push's messages without reading them.
    client.onGroupPush = (messages, at) => {
      for (let i = 0; i < messages; i++) this.onMessage?.(undefined, at);
    };
  }

  get isOpen(): boolean {
    return this.client.isOpen;
  }

  send(to: string, id: string): Sent {
    return this.call({ appinfo: id, to: { user: to }, type: 'text', body: messageBody() });
  }

  sendToGroup(group: string, id: string): Sent {
    return this.call({ appinfo: id, to: { group }, type: 'text', body: messageBody() });
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private call(args: Json): Sent {
    const { sentAt, reply } = this.client.call('send', args);
    return {
      sentAt,
      ack: reply.then(
        (r) => (r.reply.ok ? undefined : (r.reply.error?.code ?? 'UNKNOWN')),
        () => 'CLOSED',
      ),
    };
  }
}

/** Retries while the server sheds load (a fresh deployment's shards, a burst of group work). */
async function okRetrying(client: BenchClient, op: string, args: Json): Promise<Json> {
  for (let i = 0; ; i++) {
    const r = await client.call(op, args).reply;
    if (r.reply.ok) return r.reply;
    if (r.reply.error?.code !== 'OVERLOADED' || i > 200) throw new Error(`${op}: ${r.reply.error?.code} ${r.reply.error?.message}`);
    await sleep(50);
  }
}

export class SeqlineSystem implements PeerSystem {
  private readonly tokens = new Map<string, string>();

  constructor(
    readonly key: 'seqline-embedded' | 'seqline-distributed',
    readonly label: string,
    private readonly url: string,
    readonly processes: Proc[],
    readonly stores: Array<Proc & { shared: boolean }>,
    readonly setup: string[],
    readonly stop: () => Promise<void>,
  ) {}

  private async token(user: string): Promise<string> {
    let token = this.tokens.get(user);
    if (token === undefined) this.tokens.set(user, (token = await tokenFor(user)));
    return token;
  }

  async connect(user: string): Promise<SeqlinePeer> {
    return new SeqlinePeer(await BenchClient.connect(this.url, await this.token(user)));
  }

  /** Sends until one is accepted: the deployment serves every shard it needs. */
  async probe(): Promise<void> {
    const peer = await this.connect('peers-probe');
    try {
      await okRetrying(peer.client, 'send', { appinfo: `probe-${Date.now()}`, to: { user: 'peers-probe-to' }, type: 'text', body: null });
    } finally {
      await peer.close();
    }
  }

  async formGroup(group: string, users: string[], clients: PeerClient[]): Promise<string> {
    const peers = clients.map((c) => {
      if (!(c instanceof SeqlinePeer)) throw new Error('formGroup: not a Seqline client');
      return c;
    });
    const creator = peers[0];
    if (!creator) throw new Error('formGroup: no members');
    let tier = (await okRetrying(creator.client, 'group.create', { name: group, group, members: users.slice(1, MEMBER_CHUNK) }))['tier'];
    for (let i = MEMBER_CHUNK; i < users.length; i += MEMBER_CHUNK)
      tier = (await okRetrying(creator.client, 'group.add', { group, members: users.slice(i, i + MEMBER_CHUNK) }))['tier'];
    // Each member gets one entry of the group (its creation, or its own addition in a huge
    // group): once all have, the membership fanout is done and cannot overlap the timed sends.
    const deadline = performance.now() + 180_000;
    for (;;) {
      const waiting = peers.filter((p) => !p.groupsSeen.has(group)).length;
      if (waiting === 0) break;
      if (performance.now() > deadline) throw new Error(`${waiting} of ${peers.length} members never received an entry of ${group}`);
      await sleep(20);
    }
    return `tier ${String(tier)}`;
  }

  async mark(user: string): Promise<CatchUpMark> {
    const peer = await this.connect(user);
    try {
      const r = await peer.client.ok('sync', { maxSeq: 0, limit: 1 });
      return { kind: 'seq', maxSeq: Number(r.reply['headSeq']) };
    } finally {
      await peer.close();
    }
  }

  /** Connects and pages `sync` from the mark until nothing more, as a reconnecting client does. */
  async catchUp(user: string, mark: CatchUpMark): Promise<CatchUpResult> {
    if (mark.kind !== 'seq') throw new Error('catchUp: not a Seqline mark');
    const t0 = performance.now();
    const peer = await this.connect(user);
    try {
      let maxSeq = mark.maxSeq;
      let messages = 0;
      let roundTrips = 0;
      let last = t0;
      for (;;) {
        const r = await peer.client.ok('sync', { maxSeq, limit: SYNC_PAGE });
        roundTrips++;
        last = r.at;
        const entries = r.reply['entries'] as Array<{ seq: number }>;
        messages += entries.length;
        const tail = entries[entries.length - 1];
        if (tail) maxSeq = tail.seq;
        if (r.reply['hasMore'] !== true) break;
      }
      return { messages, ms: last - t0, roundTrips };
    } finally {
      await peer.close();
    }
  }
}

/** `env`: more of the server's settings (the threads bench sets SEQLINE_THREADS). */
export async function startSeqlineEmbedded(env: Record<string, string> = {}): Promise<SeqlineSystem> {
  const tmp = await tempDir('peers-embedded');
  const server = await startSeqlineChild(join(tmp.dir, 'server'), { ...UNLIMITED, ...env });
  scheduleLikeTheOthers(server.pid);
  const system = new SeqlineSystem(
    'seqline-embedded',
    'Seqline embedded',
    server.url,
    [{ label: 'seqline server', pid: server.pid }],
    [],
    [
      `Seqline embedded: \`npm start\` (LMDB, durable commits) in a child process, rate limits raised, default tiers, ` +
        `SEQLINE_THREADS=${env['SEQLINE_THREADS'] ?? 'default (the cores)'}`,
    ],
    async () => {
      await server.stop();
      await tmp.remove();
    },
  );
  await system.probe();
  return system;
}

/** The shared services' pids (their CPU also serves whatever else runs on them). */
export async function sharedStores(): Promise<Array<Proc & { shared: boolean }>> {
  const stores: Array<Proc & { shared: boolean }> = [];
  for (const name of ['cassandra', 'redis', 'nats'] as const) {
    const pid = await servicePid(name);
    if (pid !== undefined) stores.push({ label: `${name} (shared)`, pid, shared: true });
  }
  return stores;
}
