/**
 * A graceful stop (SIGTERM) of the process that owns the inboxes, in the middle of a burst of
 * sends to users who are offline, with a notify URL and an after-send URL: run against the
 * embedded server (shutdown-notify.e2e.test.ts) and against a worker of the distributed stack
 * (apps/worker/test/shutdown-notify.distributed.test.ts).
 *
 * Before the stop the notification window is long (60 s), so every offline user has exactly
 * one window open when the signal comes. The shutdown order (docs/protocol.md, "Shutdown")
 * must close each of them into one job, after every append of the stop — those of the running
 * fanout jobs included — joined it. After the restart (short windows) the sends that were not
 * acknowledged are resent. Then: every message reaches each offline member in exactly one
 * notification, the first run's messages in exactly one notification per user, every message
 * has its after-send call (exactly one when it was acknowledged before the stop and not
 * resent), and nothing is dead-lettered.
 */
import { randomBytes } from 'node:crypto';
import { issueAdminToken } from '@seqline/protocol';
import type { HookReceiver } from '@seqline/testing';
import { expect } from 'vitest';
import { SECRET, TestClient, waitFor, type Reply } from './harness.ts';

export const SHUTDOWN_HOOK_SECRET = 'shutdown-hook-secret-0123456789ab';
/** The longest window allowed: the first run lasts seconds, so its windows are all open at the stop. */
export const LONG_WINDOW_MS = 60_000;
export const SHORT_WINDOW_MS = 300;

export function shutdownHookEnv(receiver: HookReceiver, windowMs: number): Record<string, string> {
  return {
    SEQLINE_HOOK_SECRET: SHUTDOWN_HOOK_SECRET,
    SEQLINE_NOTIFY_URL: receiver.url,
    SEQLINE_AFTER_SEND_URL: receiver.url,
    SEQLINE_NOTIFY_WINDOW_MS: String(windowMs),
  };
}

export interface ShutdownBurstTarget {
  /** The gateway's socket URL (the same before and after the restart). */
  url(): string;
  tenant: string;
  receiver: HookReceiver;
  /** SIGTERM the process owning the inboxes; resolves with its exit code. */
  stop(): Promise<number | null>;
  /** Starts it again with SHORT_WINDOW_MS windows; resolves once it takes sends. */
  start(): Promise<void>;
  /** The admin API's base URL (`http://host:port`), for the dead letters. */
  adminUrl(): string;
  /** Fanout jobs the stopping process has taken and not finished (running or waiting). */
  fanoutBacklog(): Promise<number>;
  /** Called while the process is stopped: each user's inbox head, the last seq of the first run. */
  heads(users: readonly string[]): Promise<Map<string, number>>;
  /** Offline members of the group (a large-tier group: each group message is that many appends). */
  offlineMembers: number;
}

interface SentMessage {
  from: string;
  appinfo: string;
  to: { user: string } | { group: string };
  acked: boolean;
  resent: boolean;
}

interface NotifyBody {
  type: 'notify';
  user: string;
  entries: Array<{ seq: number; appinfo: string }>;
}

/** An upper bound: the burst ends at the stop. */
const MESSAGES_PER_SENDER = 400;
const SENDS_IN_FLIGHT = 4;
/** Fanout jobs taken and not finished when the signal is sent: appends still to come during the stop. */
const BACKLOG_AT_STOP = 1;

const uid = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

/** A reply, or a failure when the socket closes first (a stopped gateway answers no more). */
function callOrClosed(client: TestClient, op: string, args: Record<string, unknown>): Promise<Reply> {
  const closed = new Promise<Reply>((resolve) => {
    if (client.ws.readyState > 1) resolve({ id: 0, ok: false, error: { code: 'CLOSED', message: 'socket closed' } });
    client.ws.once('close', () => resolve({ id: 0, ok: false, error: { code: 'CLOSED', message: 'socket closed' } }));
  });
  return Promise.race([client.call(op, args), closed]);
}

export async function runShutdownBurst(target: ShutdownBurstTarget): Promise<void> {
  const senders = [uid('s'), uid('s')];
  const offline = Array.from({ length: target.offlineMembers }, () => uid('o'));
  const group = uid('g');
  const clients = await Promise.all(senders.map((s) => TestClient.connect(target.url(), s, target.tenant)));
  await clients[0]!.ok('group.create', { name: 'crew', members: [...senders, ...offline], group });

  const sent: SentMessage[] = [];
  let acked = 0;
  let stopping = false;
  const loop = async (client: TestClient, n: number): Promise<void> => {
    for (let i = n; i < MESSAGES_PER_SENDER && !stopping; i += SENDS_IN_FLIGHT) {
      const to = i % 4 === 3 ? { user: offline[(i >> 2) % offline.length]! } : { group };
      const msg: SentMessage = { from: client.user, appinfo: `${client.user}-${i}`, to, acked: false, resent: false };
      sent.push(msg);
      const reply = await callOrClosed(client, 'send', { appinfo: msg.appinfo, to, type: 'text', body: { i } });
      if (!reply.ok) return;
      msg.acked = true;
      acked++;
    }
  };
  const loops = clients.flatMap((c) => Array.from({ length: SENDS_IN_FLIGHT }, (_, n) => loop(c, n)));
  await waitFor(async () => (await target.fanoutBacklog()) >= BACKLOG_AT_STOP, 60_000, `a fanout backlog of ${BACKLOG_AT_STOP}`);
  // The signal lands while sends are in flight and fanout jobs run.
  const stopped = target.stop();
  stopping = true;
  const ackedAtStop = acked;
  expect(await stopped, 'exit code of the graceful stop').toBe(0);
  const firstRunHead = await target.heads(offline);
  await target.start();
  await Promise.all(loops);
  for (const c of clients) c.close();
  expect(ackedAtStop, 'the stop came in the middle of the burst').toBeLessThan(senders.length * MESSAGES_PER_SENDER);

  // Whatever was not acknowledged is resent, as a client would after reconnecting.
  const again = await Promise.all(senders.map((s) => TestClient.connect(target.url(), s, target.tenant)));
  for (const msg of sent.filter((m) => !m.acked)) {
    const client = again[senders.indexOf(msg.from)]!;
    await client.ok('send', { appinfo: msg.appinfo, to: msg.to, type: 'text', body: { resent: true } });
    msg.resent = true;
  }
  for (const c of again) c.close();

  const expectedFor = (user: string) =>
    sent
      .filter((m) => ('group' in m.to ? true : m.to.user === user))
      .map((m) => m.appinfo)
      .sort();
  const notifications = (user: string) =>
    target.receiver
      .accepted()
      .map((c) => c.json as NotifyBody)
      .filter((b) => b.type === 'notify' && b.user === user);
  const afterSends = () =>
    target.receiver
      .accepted()
      .map((c) => c.json as { type: string; appinfo: string })
      .filter((b) => b.type === 'after_send');
  // Bounded: a lost notification never comes, and the assertions below then name it.
  await waitFor(
    () =>
      offline.every((u) => new Set(notifications(u).flatMap((b) => b.entries.map((e) => e.appinfo))).size >= expectedFor(u).length) &&
      new Set(afterSends().map((b) => b.appinfo)).size >= sent.length,
    30_000,
    'every notification and after-send call',
  ).catch(() => undefined);

  for (const user of offline) {
    const calls = notifications(user);
    const items = calls.flatMap((b) => b.entries.map((e) => e.appinfo)).sort();
    expect(items, `notified messages of ${user}, each once`).toEqual(expectedFor(user));
    const head = firstRunHead.get(user) ?? 0;
    const firstRun = calls.filter((b) => b.entries.some((e) => e.seq <= head));
    // With the items each notified once (above): all of the first run's are in this one window.
    expect(firstRun.length, `first-run windows of ${user}`).toBeLessThanOrEqual(1);
    expect(
      firstRun.every((b) => b.entries.every((e) => e.seq <= head)),
      `the first-run window of ${user} holds first-run messages only`,
    ).toBe(true);
  }
  const calledFor = afterSends().map((b) => b.appinfo);
  for (const msg of sent) {
    const count = calledFor.filter((a) => a === msg.appinfo).length;
    if (msg.resent) expect(count, `after-send calls of resent ${msg.appinfo}`).toBeGreaterThanOrEqual(1);
    else expect(count, `after-send calls of ${msg.appinfo}`).toBe(1);
  }
  const token = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
  const res = await fetch(`${target.adminUrl()}/v1/admin/deadletters`, { headers: { authorization: `Bearer ${token}` } });
  expect(await res.json()).toEqual({ ok: true, deadLetters: [] });
}
