/**
 * Clients as an SDK would behave under faults: a call that gives up on a timeout or a dead
 * socket, sends resent with the same appinfo until acknowledged, and tailers syncing by their
 * max seq. Everything they saw is recorded for the audit (./audit.ts).
 */
import { issueToken } from '@seqline/protocol';
import { SECRET, TestClient, type Reply, type WireEntry } from '../../../server/test/harness.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A call that fails (instead of hanging) when the socket dies or no reply comes in time. */
export async function callOrFail(c: TestClient, op: string, args: Record<string, unknown>, ms: number): Promise<Reply> {
  let onClose: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      c.call(op, args),
      new Promise<never>((_, reject) => {
        onClose = () => reject(new Error('closed'));
        c.ws.once('close', onClose);
        timer = setTimeout(() => reject(new Error('timeout')), ms);
      }),
    ]);
  } finally {
    if (onClose) c.ws.off('close', onClose);
    clearTimeout(timer);
  }
}

async function connectRetry(url: string, user: string, tenant: string, stop: () => boolean): Promise<TestClient | undefined> {
  while (!stop()) {
    try {
      return await TestClient.connect(url, user, tenant);
    } catch {
      await sleep(100);
    }
  }
  return undefined;
}

export interface Ack {
  appinfo: string;
  to: { user: string } | { group: string };
  seq: number;
  /** When the first attempt was made, and when the ack came. */
  sentAt: number;
  at: number;
  duplicate: boolean;
  attempts: number;
}

/** What a send loop saw: acks in order, error replies by code, client-side timeouts. */
export interface SendStats {
  acks: Ack[];
  errors: Map<string, number>;
  timeouts: number;
  /** Appinfos given up on when the loop stopped (never acknowledged: not counted as lost). */
  unacked: string[];
}

export interface SendLoopOptions {
  urls: string[];
  tenant: string;
  user: string;
  /** The recipient of the k-th send. */
  target(k: number): { user: string } | { group: string };
  stop(): boolean;
  /** Client-side timeout per attempt (default 8 s); then resend on a new socket. */
  timeoutMs?: number;
  /** Pause between acknowledged sends (default 20 ms). */
  pauseMs?: number;
}

/**
 * Sequential sends, each resent with the SAME appinfo after an error reply, a timeout or a
 * dead socket (switching gateway), until acknowledged — what the client SDK does.
 */
export async function sendLoop(o: SendLoopOptions): Promise<SendStats> {
  const stats: SendStats = { acks: [], errors: new Map(), timeouts: 0, unacked: [] };
  let c: TestClient | undefined;
  let pending: { appinfo: string; to: Ack['to']; k: number; sentAt: number; attempts: number } | undefined;
  let k = 0;
  let attempt = 0;
  while (!o.stop()) {
    const url = o.urls[attempt % o.urls.length] as string;
    c ??= await connectRetry(url, o.user, o.tenant, o.stop);
    if (!c) break;
    pending ??= { appinfo: `${o.user}-m${k}`, to: o.target(k), k: k++, sentAt: Date.now(), attempts: 0 };
    pending.attempts++;
    try {
      const r = await callOrFail(
        c,
        'send',
        { appinfo: pending.appinfo, to: pending.to, type: 'text', body: { k: pending.k } },
        o.timeoutMs ?? 8000,
      );
      if (r.ok) {
        stats.acks.push({
          appinfo: pending.appinfo,
          to: pending.to,
          seq: r.seq as number,
          sentAt: pending.sentAt,
          at: Date.now(),
          duplicate: r.duplicate === true,
          attempts: pending.attempts,
        });
        pending = undefined;
        await sleep(o.pauseMs ?? 20);
      } else {
        stats.errors.set(r.error.code, (stats.errors.get(r.error.code) ?? 0) + 1);
        await sleep(100 + Math.random() * 100);
      }
    } catch (err) {
      if (err instanceof Error && err.message === 'timeout') stats.timeouts++;
      c.close();
      c = undefined;
      attempt++;
    }
  }
  c?.close();
  if (pending) stats.unacked.push(pending.appinfo);
  return stats;
}

/** A client tailing its inbox: sync by max seq in a loop; records every seq it was given, in order. */
export interface Tail {
  user: string;
  seen: WireEntry[];
  errors: number;
  done: Promise<void>;
}

export function tailInbox(urls: string[], tenant: string, user: string, stop: () => boolean): Tail {
  const tail: Tail = { user, seen: [], errors: 0, done: Promise.resolve() };
  tail.done = (async () => {
    let c: TestClient | undefined;
    let attempt = 0;
    while (!stop()) {
      c ??= await connectRetry(urls[attempt % urls.length] as string, user, tenant, stop);
      if (!c) break;
      try {
        const r = await callOrFail(c, 'sync', { maxSeq: tail.seen.at(-1)?.seq ?? 0, limit: 200 }, 8000);
        if (r.ok) {
          tail.seen.push(...(r.entries as WireEntry[]));
          if (r.hasMore !== true) await sleep(10);
        } else {
          tail.errors++;
          await sleep(100);
        }
      } catch {
        tail.errors++;
        c.close();
        c = undefined;
        attempt++;
      }
    }
    c?.close();
  })();
  return tail;
}

const tokens = new Map<string, string>();
async function tokenFor(tenant: string, user: string): Promise<string> {
  const key = `${tenant}:${user}`;
  let token = tokens.get(key);
  if (!token) {
    token = await issueToken({ secret: SECRET, user, tenant, ttlSeconds: 3600 });
    tokens.set(key, token);
  }
  return token;
}

/** The whole inbox of a user through `GET /v1/sync` (paging by max seq), as a client would. */
export async function httpSyncAll(httpUrl: string, tenant: string, user: string): Promise<WireEntry[]> {
  const authorization = `Bearer ${await tokenFor(tenant, user)}`;
  const out: WireEntry[] = [];
  for (let maxSeq = 0; ;) {
    const res = await fetch(`${httpUrl}/v1/sync?maxSeq=${maxSeq}&limit=1000`, { headers: { authorization } });
    const body = (await res.json()) as { ok: boolean; entries?: WireEntry[]; hasMore?: boolean; error?: unknown };
    if (!body.ok || !body.entries) throw new Error(`sync of ${user} failed: ${res.status} ${JSON.stringify(body.error)}`);
    out.push(...body.entries);
    maxSeq = body.entries.at(-1)?.seq ?? maxSeq;
    if (!body.hasMore) return out;
  }
}

/** The `headSeq` a `sync` through this gateway answers for the user. */
export async function httpHeadSeq(httpUrl: string, tenant: string, user: string): Promise<number> {
  const res = await fetch(`${httpUrl}/v1/sync?maxSeq=0&limit=1`, { headers: { authorization: `Bearer ${await tokenFor(tenant, user)}` } });
  return ((await res.json()) as { headSeq?: number }).headSeq ?? -1;
}

/** A counter of the gateway's Prometheus text (`/metrics`), summed over its label sets. */
export async function metricValue(httpUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${httpUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name) sum += Number(m[3]);
  }
  return sum;
}

export function formatErrors(errors: Map<string, number>): string {
  return [...errors].map(([code, n]) => `${code}=${n}`).join(' ') || 'none';
}

/** Merges the stats of several loops. */
export function mergeStats(all: SendStats[]): SendStats {
  const errors = new Map<string, number>();
  for (const s of all) for (const [code, n] of s.errors) errors.set(code, (errors.get(code) ?? 0) + n);
  return {
    acks: all.flatMap((s) => s.acks),
    errors,
    timeouts: all.reduce((n, s) => n + s.timeouts, 0),
    unacked: all.flatMap((s) => s.unacked),
  };
}
