/**
 * The end of a round: wait (bounded) until what was acknowledged has been delivered — every
 * recipient's copy or the group stream, every after-send event, the offline users'
 * notifications — then read the final state as the checker's truth: every inbox raw through the
 * admin API (deleted and cleared entries included), every group stream, the dead letters.
 */
import { SeqlineClient, type Entry } from '@seqline/client';
import WebSocket from 'ws';
import { now, type HistoryWriter } from './history.ts';
import type { HookSink } from './hooks.ts';
import type { RoundPlan } from './plan.ts';
import { admin, userToken, type Clocks, type SystemUnderTest } from './system.ts';

export interface Acked {
  sender: string;
  appinfo: string;
  to: { user: string } | { group: string };
  /** When the acknowledgement arrived (history clock). */
  ret: number;
}

async function rawInbox(sys: SystemUnderTest, clocks: Clocks, user: string): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let after = 0; ;) {
    const r = await admin(sys, clocks, 'GET', `/inbox/${sys.tenant}/${user}?after=${after}&limit=10000`);
    const entries = r.entries as Entry[];
    out.push(...entries);
    if (r.hasMore !== true || entries.length === 0) return out;
    after = (entries.at(-1) as Entry).seq;
  }
}

async function stream(sys: SystemUnderTest, clocks: Clocks, group: string, member: string): Promise<Entry[]> {
  const c = new SeqlineClient({
    url: `${sys.wsBases()[0]}`,
    token: () => userToken(sys.tenant, member, () => clocks.wallClock()),
    WebSocket: WebSocket,
    tokenTransport: 'header',
    followGroups: false,
    trackConversations: false,
  });
  await c.connect();
  try {
    const out: Entry[] = [];
    for (let after = 0; ;) {
      const page = await c.groupHistory({ group, afterGseq: after, limit: 1000 });
      out.push(...(page.messages as Entry[]));
      const last = page.messages.at(-1) as { gseq?: number; seq: number } | undefined;
      if (!page.hasMore || !last) return out;
      after = last.gseq ?? last.seq;
    }
  } finally {
    c.close();
  }
}

/**
 * The keys each log must hold, as far as the driver can tell without the checker's care for churn.
 * An ack a JetStream rollback may have taken jobs of (`exposed`) owes only the sender's copy.
 */
function expected(plan: RoundPlan, acked: readonly Acked[], exposed: (a: Acked) => boolean): Map<string, Set<string>> {
  const need = new Map<string, Set<string>>();
  const add = (log: string, key: string) => {
    let s = need.get(log);
    if (!s) need.set(log, (s = new Set()));
    s.add(key);
  };
  for (const a of acked) {
    const key = `${a.sender}/${a.appinfo}`;
    add(`inbox:${a.sender}`, key);
    if (exposed(a)) continue;
    if ('user' in a.to) add(`inbox:${a.to.user}`, key);
    else {
      const g = plan.groups.find((x) => x.id === (a.to as { group: string }).group);
      if (!g || g.churn) continue;
      if (g.tier === 'huge') add(`stream:${g.id}`, key);
      else for (const m of g.members) add(`inbox:${m}`, key);
    }
  }
  return need;
}

export interface SettleResult {
  deliveredMs: number;
  undelivered: number;
  afterSendMissing: number;
  unnotified: number;
}

/** Polls until every expected copy, event and notification is there, or the bound passes. */
export async function settle(o: {
  sys: SystemUnderTest;
  clocks: Clocks;
  plan: RoundPlan;
  acked: readonly Acked[];
  /** An ack whose jobs (recipient copies, after-send event) a JetStream rollback may have taken. */
  exposed: (a: Acked) => boolean;
  hooks: HookSink;
  timeoutMs: number;
  notifyBoundMs: number;
}): Promise<SettleResult> {
  const start = Date.now();
  const need = expected(o.plan, o.acked, o.exposed);
  const hugeMember = (g: string) => o.plan.groups.find((x) => x.id === g)?.admin ?? 'u0';
  let undelivered: number;
  let afterSendMissing: number;
  for (;;) {
    undelivered = 0;
    for (const [log, keys] of need) {
      const [kind, id] = log.split(':') as [string, string];
      const entries = await (kind === 'inbox' ? rawInbox(o.sys, o.clocks, id) : stream(o.sys, o.clocks, id, hugeMember(id))).catch(
        () => [],
      );
      const have = new Set(entries.map((e) => (e.appinfo.includes(':') ? e.appinfo : `${e.from}/${e.appinfo}`)));
      for (const k of keys) if (!have.has(k)) undelivered++;
    }
    afterSendMissing = o.acked.filter((a) => !o.exposed(a) && !o.hooks.afterSend.has(`${a.sender}/${a.appinfo}`)).length;
    if ((undelivered === 0 && afterSendMissing === 0) || Date.now() - start > o.timeoutMs) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const deliveredMs = Date.now() - start;
  // Offline users' notifications: every message from someone else named in one. One lost with a
  // crashed window never comes, so this wait is bounded (a redelivered job waits out the queue's
  // ack wait, 30 s, first).
  let unnotified: number;
  for (const bound = Date.now() + o.notifyBoundMs; ;) {
    unnotified = 0;
    for (const user of o.plan.offline) {
      const entries = await rawInbox(o.sys, o.clocks, user).catch(() => []);
      const got = o.hooks.notified.get(user) ?? new Set<number>();
      unnotified += entries.filter((e) => e.kind === 'msg' && e.from !== user && !got.has(e.seq)).length;
    }
    if (unnotified === 0 || Date.now() > bound) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { deliveredMs, undelivered, afterSendMissing, unnotified };
}

/** Reads and records the final state the checker judges against. */
export async function recordFinalState(o: {
  sys: SystemUnderTest;
  clocks: Clocks;
  plan: RoundPlan;
  history: HistoryWriter;
}): Promise<void> {
  for (const user of [...o.plan.online, ...o.plan.offline]) {
    const call = now();
    const entries = await rawInbox(o.sys, o.clocks, user);
    o.history.write({ t: 'final', user, call, ret: now(), entries });
  }
  for (const g of o.plan.groups.filter((x) => x.tier === 'huge')) {
    const call = now();
    const messages = await stream(o.sys, o.clocks, g.id, g.admin);
    o.history.write({ t: 'finalStream', group: g.id, call, ret: now(), messages });
  }
  const dead = await admin(o.sys, o.clocks, 'GET', '/deadletters');
  const list = (dead.deadLetters as unknown[] | undefined) ?? [];
  o.history.write({ t: 'deadletters', count: list.length, items: list.slice(0, 20) });
}
