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
import { NotifyBacklogProbe, type NotifyBacklog } from './notify-backlog.ts';
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

/**
 * How the notification wait ended: every message notified; nothing left that could notify (no
 * notify job pending, nothing held by the notifiers — what is still unnotified was lost with a
 * crashed window, or is missing: the checker tells); or the safety bound, with work still pending.
 */
export type NotifyWaitEnd = 'notified' | 'drained' | 'bound';

export interface SettleResult {
  deliveredMs: number;
  undelivered: number;
  afterSendMissing: number;
  unnotified: number;
  /** How long the notification wait took, after delivery settled. */
  notifiedMs: number;
  notifyWaitEnd: NotifyWaitEnd;
  /** The last backlog read (absent when every message was notified before one was needed). */
  notifyBacklog?: NotifyBacklog;
  /** Why the last backlog read failed, when it did. */
  notifyBacklogError?: string;
  /** The most notify jobs any backlog read saw pending (0 when none was read). */
  peakNotifyJobs: number;
}

async function unnotifiedNow(o: { sys: SystemUnderTest; clocks: Clocks; plan: RoundPlan; hooks: HookSink }): Promise<number> {
  let unnotified = 0;
  for (const user of o.plan.offline) {
    const entries = await rawInbox(o.sys, o.clocks, user).catch(() => []);
    const got = o.hooks.notified.get(user) ?? new Set<number>();
    unnotified += entries.filter((e) => e.kind === 'msg' && e.from !== user && !got.has(e.seq)).length;
  }
  return unnotified;
}

/**
 * Polls until every expected copy and event is there, then until every notification is there or
 * none can come any more; each wait has `timeoutMs` as a safety bound only.
 */
export async function settle(o: {
  sys: SystemUnderTest;
  clocks: Clocks;
  plan: RoundPlan;
  acked: readonly Acked[];
  /** An ack whose jobs (recipient copies, after-send event) a JetStream rollback may have taken. */
  exposed: (a: Acked) => boolean;
  hooks: HookSink;
  timeoutMs: number;
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
  // Offline users' notifications: every message from someone else named in one, or none can
  // come any more. A notification lost with a crashed window never comes, and a late one may wait
  // out several retry backoffs of its job (after a store outage): so the wait ends on counts — no
  // job of the notify queue pending and no item held by the notifiers, read twice in a row (an
  // enqueue under way is in neither count for a moment) — not on a guessed duration.
  const notifyStart = Date.now();
  const probe = new NotifyBacklogProbe(o.sys, o.clocks);
  let unnotified: number;
  let notifyWaitEnd: NotifyWaitEnd;
  let notifyBacklog: NotifyBacklog | undefined;
  let notifyBacklogError: string | undefined;
  let peakNotifyJobs = 0;
  try {
    for (let quietReads = 0; ;) {
      unnotified = await unnotifiedNow(o);
      if (unnotified === 0) {
        notifyWaitEnd = 'notified';
        break;
      }
      notifyBacklog = await probe.read().then(
        (b) => ((notifyBacklogError = undefined), b),
        (err: unknown) => ((notifyBacklogError = String(err)), undefined),
      );
      peakNotifyJobs = Math.max(peakNotifyJobs, notifyBacklog?.pendingJobs ?? 0);
      quietReads = notifyBacklog?.pendingJobs === 0 && notifyBacklog.heldItems === 0 ? quietReads + 1 : 0;
      if (quietReads >= 2) {
        notifyWaitEnd = 'drained';
        break;
      }
      if (Date.now() - notifyStart > o.timeoutMs) {
        notifyWaitEnd = 'bound';
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await probe.close();
  }
  return {
    deliveredMs,
    undelivered,
    afterSendMissing,
    unnotified,
    notifiedMs: Date.now() - notifyStart,
    notifyWaitEnd,
    peakNotifyJobs,
    ...(notifyBacklog === undefined ? {} : { notifyBacklog }),
    ...(notifyBacklogError === undefined ? {} : { notifyBacklogError }),
  };
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
