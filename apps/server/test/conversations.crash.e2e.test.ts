/**
 * No drift, ever (issue #26), under kill -9: random sends (1:1 and a group, with mentions),
 * membership changes, reads from two devices, recalls, edits, deletes and clears against the
 * real server process, SIGKILLed and restarted between and during bursts of sends. After every
 * step the index the server answers with (`conversations`) equals core's recount of the inbox
 * as of its `headSeq`.
 * The recount's input is every entry an observer device of the owner has synced: sync drops
 * entries once deleted or cleared, so the owner deletes and clears only what the observer saw.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { conversationKey, recountConversations, type Entry } from '@seqline/core';
import { ChildServer, freePort } from './child-server.ts';
import { TestClient, type WireEntry } from './harness.ts';

const ME = 'me';
const PEERS = ['p1', 'p2'] as const;
const GROUP = 'crew';

interface WireConv {
  conv: { type: 'user' | 'group'; id: string };
  lastSeq: number;
  last: { seq: number } | null;
  readSeq: number;
  unread: number;
  mentions: number;
  clearedSeq: number;
  asOfSeq: number;
}

type Step =
  | { op: 'dm'; from: 0 | 1; mention: boolean }
  | { op: 'group'; from: 0 | 1 | 2; mentions: 'none' | 'me' | 'all' | 'peer' }
  | { op: 'reply'; to: 0 | 1 | 2 }
  | { op: 'read'; device: 0 | 1; conv: 0 | 1 | 2; at: number }
  | { op: 'recall' | 'edit'; pick: number }
  | { op: 'delete'; pick: number }
  | { op: 'clear'; conv: 0 | 1 | 2 }
  | { op: 'member'; add: boolean; who: 0 | 1 | 2 }
  | { op: 'kill'; burst: number; delayMs: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('dm' as const), from: fc.constantFrom(0 as const, 1 as const), mention: fc.boolean() }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('group' as const),
      from: fc.constantFrom(0 as const, 1 as const, 2 as const),
      mentions: fc.constantFrom('none' as const, 'me' as const, 'all' as const, 'peer' as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('reply' as const), to: fc.constantFrom(0 as const, 1 as const, 2 as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('read' as const),
      device: fc.constantFrom(0 as const, 1 as const),
      conv: fc.constantFrom(0 as const, 1 as const, 2 as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('recall' as const, 'edit' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('clear' as const), conv: fc.constantFrom(0 as const, 1 as const, 2 as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('member' as const),
      add: fc.boolean(),
      who: fc.constantFrom(0 as const, 1 as const, 2 as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('kill' as const),
      burst: fc.integer({ min: 0, max: 12 }),
      delayMs: fc.integer({ min: 0, max: 15 }),
    }),
  },
);

/** The conversations of `me`: the two peers and the group. */
const CONVS = [
  { type: 'user' as const, id: PEERS[0] },
  { type: 'user' as const, id: PEERS[1] },
  { type: 'group' as const, id: GROUP },
];

class Run {
  private clients = new Map<string, TestClient>();
  readonly log = new Map<number, WireEntry>();
  /** Messages each user sent, by appinfo, for recalls and edits. */
  private readonly sent: Array<{ from: string; appinfo: string }> = [];
  private n = 0;
  constructor(private readonly srv: ChildServer) {}

  async connectAll(): Promise<void> {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    for (const user of [ME, `${ME}#b`, `${ME}#obs`, ...PEERS])
      this.clients.set(user, await TestClient.connect(this.srv.url, user.split('#')[0]!));
  }

  client(user: string): TestClient {
    const c = this.clients.get(user);
    if (!c) throw new Error(`no client ${user}`);
    return c;
  }

  /** Sync the observer to the end of the inbox. */
  async catchUp(): Promise<number> {
    const obs = this.client(`${ME}#obs`);
    let maxSeq = Math.max(0, ...this.log.keys());
    for (;;) {
      const r = await obs.ok<{ entries: WireEntry[]; hasMore: boolean }>('sync', { maxSeq, limit: 1000 });
      for (const e of r.entries) this.log.set(e.seq, e);
      maxSeq = r.entries.at(-1)?.seq ?? maxSeq;
      if (!r.hasMore) return maxSeq;
    }
  }

  private seen(conv: number): WireEntry[] {
    const want = CONVS[conv]!;
    return [...this.log.values()].filter((e) => e.conv.type === want.type && e.conv.id === want.id).sort((a, b) => a.seq - b.seq);
  }

  private send(from: string, to: { user: string } | { group: string }, mentions?: string[]) {
    const appinfo = `c${this.n++}-${Date.now()}`;
    this.sent.push({ from, appinfo });
    return this.client(from).call('send', { appinfo, to, type: 'text', body: { n: this.n }, ...(mentions ? { mentions } : {}) });
  }

  async apply(step: Step): Promise<void> {
    switch (step.op) {
      case 'dm':
        await this.send(PEERS[step.from], { user: ME }, step.mention ? [ME] : undefined);
        return;
      case 'group': {
        const from = step.from === 2 ? ME : PEERS[step.from];
        const mentions = { none: undefined, me: [ME], all: ['@all'], peer: [PEERS[0]] }[step.mentions];
        await this.send(from, { group: GROUP }, mentions);
        return;
      }
      case 'reply':
        await this.send(ME, step.to === 2 ? { group: GROUP } : { user: PEERS[step.to] });
        return;
      case 'read': {
        const entries = this.seen(step.conv);
        const target = entries[Math.floor(step.at * entries.length)];
        if (target) await this.client(step.device === 0 ? ME : `${ME}#b`).call('read', { conv: CONVS[step.conv], upToSeq: target.seq });
        return;
      }
      case 'recall':
      case 'edit': {
        const msg = this.sent[step.pick % Math.max(1, this.sent.length)];
        if (!msg) return;
        const c = this.client(msg.from);
        await (step.op === 'recall'
          ? c.call('recall', { appinfo: msg.appinfo })
          : c.call('edit', { appinfo: msg.appinfo, body: { edited: this.n++ } }));
        return;
      }
      case 'delete': {
        const seqs = [...this.log.keys()];
        const seq = seqs[step.pick % Math.max(1, seqs.length)];
        if (seq !== undefined) await this.client(ME).call('delete', { seqs: [seq] });
        return;
      }
      case 'clear': {
        // Up to what the observer saw: an entry that lands meanwhile is not hidden unseen.
        const last = this.seen(step.conv).at(-1);
        if (last) await this.client(`${ME}#b`).call('clear', { conv: CONVS[step.conv], upToSeq: last.seq });
        return;
      }
      case 'member': {
        // Membership changes: group events in every member's inbox (a removed peer's sends fail).
        const who = [...PEERS, 'p3'][step.who]!;
        await this.client(ME).call(step.add ? 'group.add' : 'group.remove', { group: GROUP, members: [who] });
        return;
      }
      case 'kill': {
        // Sends in flight when the process dies: each is stored or not, never half.
        const burst = Array.from({ length: step.burst }, (_, i) => this.send(PEERS[i % 2]!, i % 3 === 0 ? { group: GROUP } : { user: ME }));
        await new Promise((r) => setTimeout(r, step.delayMs));
        await this.srv.kill9();
        // Their replies never come (each resolves as TEST_NO_REPLY later): not awaited.
        void Promise.allSettled(burst);
        await this.srv.start();
        await this.connectAll();
        return;
      }
    }
  }

  /** The index equals the recount as of its headSeq (fanout after a send is asynchronous). */
  async expectNoDrift(after: string): Promise<void> {
    const r = await this.client(ME).ok<{ convs: WireConv[]; headSeq: number; hasMore: boolean }>('conversations', { limit: 500 });
    expect(r.hasMore).toBe(false);
    while ((await this.catchUp()) < r.headSeq) await new Promise((res) => setTimeout(res, 10));
    const upTo = [...this.log.values()].filter((e) => e.seq <= r.headSeq) as unknown as Entry[];
    const recount = [...recountConversations(upTo, ME).values()]
      .map((c) => ({ ...c, conv: conversationKey(c.conv) }))
      .sort((a, b) => a.conv.localeCompare(b.conv));
    const index = r.convs
      .map(({ conv, lastSeq, last, readSeq, unread, mentions, clearedSeq, asOfSeq }) => ({
        conv: conversationKey(conv),
        lastSeq,
        lastMsgSeq: last?.seq ?? 0,
        readSeq,
        clearedSeq,
        unread,
        mentions,
        asOfSeq,
      }))
      .sort((a, b) => a.conv.localeCompare(b.conv));
    expect(index, `conversations after ${after}`).toEqual(
      recount.map(({ conv, lastSeq, lastMsgSeq, readSeq, clearedSeq, unread, mentions, asOfSeq }) => ({
        conv,
        lastSeq,
        lastMsgSeq,
        readSeq,
        clearedSeq,
        unread,
        mentions,
        asOfSeq,
      })),
    );
  }
}

describe('conversation index under kill -9 (embedded server process)', () => {
  const dirs: string[] = [];
  let server: ChildServer | undefined;
  afterAll(async () => {
    await server?.terminate();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('equals the recount of the inbox after every step, across SIGKILLs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 20, maxLength: 35 }), async (steps) => {
        const dir = await mkdtemp(join(tmpdir(), 'seqline-conv-crash-'));
        dirs.push(dir);
        server = new ChildServer(await freePort(), dir);
        await server.start();
        const run = new Run(server);
        try {
          await run.connectAll();
          await run.client(ME).ok('group.create', { name: 'crew', members: [ME, ...PEERS], group: GROUP });
          for (const [i, step] of steps.entries()) {
            await run.apply(step);
            await run.expectNoDrift(`step ${i}: ${JSON.stringify(step)}`);
          }
        } finally {
          await server.terminate();
        }
      }),
      { numRuns: 4, endOnFailure: true },
    );
  });
});
