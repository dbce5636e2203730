/**
 * One device of an online user: a real SDK client (@seqline/client) on a tapped socket, doing
 * one thing at a time, chosen at random — mostly sends (1:1 and to its groups, some with
 * mentions), and reads, recalls, edits, deletes, clears, conversation lists, history pages,
 * group acks and member changes, and now and then a disconnect and resync. A send the SDK
 * gave up on is sent again later with the same appinfo, as an app must.
 */
import { randomUUID } from 'node:crypto';
import { MemoryMaxSeqStore, SeqlineClient, type Entry, type Recipient } from '@seqline/client';
import type { HistoryWriter } from './history.ts';
import type { GroupPlan, RoundPlan } from './plan.ts';
import type { Rng } from './rng.ts';
import { userToken } from './system.ts';
import { tappedWebSocket } from './wire-tap.ts';

/** What every device shares in a round. */
export interface DeviceContext {
  plan: RoundPlan;
  tenant: string;
  history: HistoryWriter;
  gateways: () => string[];
  wallClock: () => number;
  /** Takes one message from the round's budget; false once it is spent. */
  takeMessage(): boolean;
  budgetSpent(): boolean;
  /** The traffic phase is over. */
  stopped(): boolean;
  /** Current churn-group members as the driver last saw them answered. */
  churnMembers: Set<string>;
  onReply(user: string, op: string, args: Record<string, unknown>, res: Record<string, unknown>): void;
  errors: Map<string, number>;
}

const WEIGHTS = {
  send: 60,
  markRead: 5,
  readV1: 3,
  recall: 2,
  edit: 3,
  delete: 2,
  clear: 1,
  conversations: 6,
  history: 2,
  groupAck: 3,
  churn: 3,
  reconnect: 1,
  sync: 2,
};

interface Outgoing {
  appinfo: string;
  to: Recipient;
  mentions?: string[];
  tries: number;
}

export class Device {
  private client: SeqlineClient | undefined;
  private readonly store = new MemoryMaxSeqStore();
  private readonly seen: Entry[] = [];
  private readonly acked: string[] = [];
  private readonly retry: Outgoing[] = [];
  private counter = 0;

  constructor(
    readonly user: string,
    readonly dev: string,
    private readonly ctx: DeviceContext,
    private readonly rng: Rng,
  ) {}

  private newClient(): SeqlineClient {
    const c = new SeqlineClient({
      url: 'ws://127.0.0.1:1', // replaced by the tap with a gateway of the round
      token: () => userToken(this.ctx.tenant, this.user, this.ctx.wallClock),
      WebSocket: tappedWebSocket({
        history: this.ctx.history,
        dev: this.dev,
        user: this.user,
        gateways: this.ctx.gateways,
        onReply: (op, args, res) => this.ctx.onReply(this.user, op, args, res),
      }),
      tokenTransport: 'header',
      store: this.store,
      requestTimeoutMs: 8000,
      reconnectBackoff: { initialMs: 100, maxMs: 2000 },
    });
    c.on('entries', (entries) => {
      this.seen.push(...entries);
      if (this.seen.length > 300) this.seen.splice(0, this.seen.length - 300);
    });
    return c;
  }

  async start(): Promise<void> {
    this.client = this.newClient();
    await this.client.connect();
  }

  async run(): Promise<void> {
    while (!this.ctx.stopped()) {
      // Once the budget is spent, only what is owed is sent: the sends still to be retried.
      if (this.ctx.budgetSpent() && this.retry.length === 0) return;
      const op = this.ctx.budgetSpent() ? 'send' : this.rng.weighted(WEIGHTS);
      try {
        await this.step(op);
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'UNKNOWN';
        this.ctx.errors.set(`${op}:${code}`, (this.ctx.errors.get(`${op}:${code}`) ?? 0) + 1);
      }
    }
  }

  close(): void {
    this.client?.close();
  }

  /** Sends the SDK gave up on, still to be sent again. */
  pendingRetries(): number {
    return this.retry.length;
  }

  /** The device's client (the round's setup creates its groups through it). */
  get sdk(): SeqlineClient {
    if (!this.client) throw new Error(`${this.dev} not started`);
    return this.client;
  }

  private myGroups(): GroupPlan[] {
    return this.ctx.plan.groups.filter((g) => (g.churn ? this.ctx.churnMembers.has(this.user) : g.members.includes(this.user)));
  }

  private async step(op: keyof typeof WEIGHTS): Promise<void> {
    const c = this.client;
    if (!c) return;
    const rng = this.rng;
    switch (op) {
      case 'send':
        return this.send(c);
      case 'markRead': {
        const conv = rng.chance(0.5) ? c.conversations()[0] : rng.pick([...c.conversations(), undefined]);
        if (conv && conv.lastSeq > 0) await c.markRead(conv.conv, conv.lastSeq);
        return;
      }
      case 'readV1': {
        const msgs = this.seen.filter((e) => e.kind === 'msg' && e.from !== this.user).slice(-10);
        if (msgs.length > 0) await c.read([...new Set([rng.pick(msgs).seq, rng.pick(msgs).seq])]);
        return;
      }
      case 'recall':
      case 'edit': {
        if (this.acked.length === 0) return;
        const appinfo = rng.pick(this.acked.slice(-20));
        if (op === 'recall') await c.recall(appinfo);
        else await c.edit(appinfo, { text: `edited ${rng.int(1, 1e6)}` });
        return;
      }
      case 'delete': {
        if (this.seen.length === 0) return;
        const recent = this.seen.slice(-30);
        await c.deleteForMe([...new Set([rng.pick(recent).seq, rng.pick(recent).seq])]);
        return;
      }
      case 'clear': {
        const conv = rng.pick([...c.conversations(), undefined]);
        if (conv && conv.lastSeq > 0) await c.clear(conv.conv, conv.lastSeq);
        return;
      }
      case 'conversations':
        await c.requestRaw('conversations', { limit: 50 });
        return;
      case 'history':
        await c.history(rng.chance(0.5) ? 0 : (rng.pick([...this.seen, { seq: 0 }]).seq ?? 0), 20);
        return;
      case 'groupAck': {
        const huge = this.myGroups().find((g) => g.tier === 'huge');
        const pos = huge ? c.groupPosition(huge.id) : undefined;
        if (huge && pos !== undefined && pos > 0) await c.groupAck(huge.id, pos);
        return;
      }
      case 'churn': {
        const group = this.ctx.plan.groups.find((g) => g.churn && g.admin === this.user);
        if (!group) return;
        const who = rng.pick(this.ctx.plan.churners);
        if (this.ctx.churnMembers.has(who)) {
          await c.removeMembers(group.id, [who]);
          this.ctx.churnMembers.delete(who);
        } else {
          await c.addMembers(group.id, [who]);
          this.ctx.churnMembers.add(who);
        }
        return;
      }
      case 'reconnect':
        c.close();
        this.client = this.newClient();
        await this.client.connect();
        return;
      case 'sync':
        await c.syncNow();
        return;
    }
  }

  private nextAppinfo(): string {
    if (this.ctx.plan.counterAppinfos.has(this.user)) return `c${this.dev.endsWith('/d0') ? '' : 'x'}${++this.counter}`;
    return randomUUID();
  }

  private async send(c: SeqlineClient): Promise<void> {
    let out = this.retry.shift();
    if (!out) {
      if (!this.ctx.takeMessage()) return;
      out = { appinfo: this.nextAppinfo(), tries: 0, ...this.target() };
    }
    out.tries++;
    try {
      const r = await c.send({
        appinfo: out.appinfo,
        to: out.to,
        type: 'text',
        body: { text: `m ${out.appinfo}` },
        ...(out.mentions ? { mentions: out.mentions } : {}),
      });
      this.acked.push(r.appinfo);
      if (this.acked.length > 100) this.acked.shift();
    } catch (err) {
      const code = (err as { code?: string }).code;
      // Refused outright (not a member any more…): nothing was stored; anything else may have been.
      if (code !== 'FORBIDDEN' && code !== 'BAD_REQUEST' && code !== 'NOT_FOUND' && out.tries < 20) this.retry.push(out);
      throw err;
    }
  }

  private target(): { to: Recipient; mentions?: string[] } {
    const rng = this.rng;
    const groups = this.myGroups();
    if (groups.length > 0 && rng.chance(0.45)) {
      const g = rng.pick(groups);
      if (rng.chance(0.15)) {
        const others = (g.churn ? [...this.ctx.churnMembers] : g.members).filter((m) => m !== this.user);
        const mention = rng.chance(0.3) || others.length === 0 ? '@all' : rng.pick(others);
        return { to: { group: g.id }, mentions: [mention] };
      }
      return { to: { group: g.id } };
    }
    const pool = rng.chance(0.2) ? this.ctx.plan.offline : this.ctx.plan.online.filter((u) => u !== this.user);
    const peer = rng.pick(pool);
    return rng.chance(0.05) ? { to: { user: peer }, mentions: [peer] } : { to: { user: peer } };
  }
}
