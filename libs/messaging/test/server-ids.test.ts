/**
 * Server-made ids name their whole scope, over the real embedded engine (LMDB jobs table, local
 * queue). Two honest clients whose appinfo is a local counter, cs1 and cs2, both use `local-1`
 * in one tenant: every job either makes must run. While the workers are held, the first job is
 * still pending in the one jobs table when the second is enqueued — the moment an id naming
 * only the tenant and the appinfo dropped the second as a duplicate. The distributed run of the
 * same scenarios is apps/worker/test/server-ids.distributed.test.ts.
 */
import { inboxKey, type Entry, type PushMessage, type TenantHooks } from '@seqline/core';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessaging, NOTIFY_QUEUE, startWorkers, type Messaging, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';
import { heldQueue, type HeldQueue } from './support/held-queue.ts';
import { NOTIFY_SECRET, openNotifyRig, type NotifyBody } from './support/offline-notify-rig.ts';

const SECRET = 'server-ids-secret-0123456789';
const LOCAL = 'local-1';
/** The longest ids: 64 characters (ID_PATTERN). */
const LONG_TENANT = 't'.repeat(64);
const text = (t: string) => ({ type: 'text', body: { text: t } });
let rig: EmbeddedRig;
let held: HeldQueue;
let messaging: Messaging;
let workers: Workers;
let receiver: HookReceiver;
const hooks: Record<string, TenantHooks> = {};

beforeAll(async () => {
  receiver = await startHookReceiver({ secret: SECRET });
  hooks.aft = { secret: SECRET, afterSendUrl: receiver.url };
  hooks[LONG_TENANT] = { secret: SECRET, afterSendUrl: receiver.url };
  rig = await openEmbeddedRig('server-ids', { hooks });
  held = heldQueue(rig.queue);
  messaging = createMessaging(rig.deps);
  workers = await startWorkers({ ...rig.deps, queue: held.queue });
});
afterAll(async () => {
  held.release();
  workers.stop();
  await rig.close();
  await receiver.close();
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every job accepted so far has run: none is pending in the jobs table. */
const settled = () => until('no pending job', async () => (await rig.engine.jobs.list({})).length === 0);

const inbox = (tenant: string, user: string): Promise<Entry[]> =>
  rig.engine.timeline.readAfter({ inbox: inboxKey(tenant, user), afterSeq: 0, limit: 1000 });
/** What `user` holds of `from`'s `appinfo`: the message copies and the recall entries. */
async function holds(tenant: string, user: string, from: string): Promise<{ msgs: number; recalls: number }> {
  const entries = await inbox(tenant, user);
  return {
    msgs: entries.filter((e) => e.kind === 'msg' && e.from === from && e.appinfo === LOCAL).length,
    recalls: entries.filter((e) => e.kind === 'recall' && e.recall?.appinfo === LOCAL && e.from === from).length,
  };
}

/** Runs both senders' operations while the workers hold every job, then lets them all run. */
async function whileHeld(ops: () => Promise<void>): Promise<void> {
  held.hold();
  try {
    await ops();
  } finally {
    held.release();
  }
  await settled();
}

describe('server-made ids name the sender (embedded)', () => {
  it('group fanout: cs1 in G1 and cs2 in G2 both send local-1; both groups receive it', async () => {
    const t = 'fan';
    const [cs1, cs2] = [
      { tenant: t, user: 'cs1' },
      { tenant: t, user: 'cs2' },
    ];
    await messaging.createGroup(cs1, { name: 'g1', id: 'g1', members: ['m1'] });
    await messaging.createGroup(cs2, { name: 'g2', id: 'g2', members: ['m2'] });
    await whileHeld(async () => {
      expect(await messaging.send(cs1, { appinfo: LOCAL, to: { group: 'g1' }, ...text('from cs1') })).toMatchObject({ duplicate: false });
      expect(await messaging.send(cs2, { appinfo: LOCAL, to: { group: 'g2' }, ...text('from cs2') })).toMatchObject({ duplicate: false });
    });
    expect(await holds(t, 'm1', 'cs1')).toEqual({ msgs: 1, recalls: 0 });
    expect(await holds(t, 'm2', 'cs2')).toEqual({ msgs: 1, recalls: 0 });
  });

  it('huge-group mentions: cs1 names m1 in H1, cs2 names m2 in H2, both with local-1; both get their copy', async () => {
    const t = 'men';
    const [cs1, cs2] = [
      { tenant: t, user: 'cs1' },
      { tenant: t, user: 'cs2' },
    ];
    // Five members make a group huge in the rig's tiers: read-fanout, mentions copied to inboxes.
    const h1 = await messaging.createGroup(cs1, { name: 'h1', id: 'h1', members: ['m1', 'a1', 'b1', 'c1'] });
    const h2 = await messaging.createGroup(cs2, { name: 'h2', id: 'h2', members: ['m2', 'a2', 'b2', 'c2'] });
    expect([h1.tier, h2.tier]).toEqual(['huge', 'huge']);
    await whileHeld(async () => {
      await messaging.send(cs1, { appinfo: LOCAL, to: { group: 'h1' }, mentions: ['m1'], ...text('@m1') });
      await messaging.send(cs2, { appinfo: LOCAL, to: { group: 'h2' }, mentions: ['m2'], ...text('@m2') });
    });
    expect(await holds(t, 'm1', 'cs1')).toEqual({ msgs: 1, recalls: 0 });
    expect(await holds(t, 'm2', 'cs2')).toEqual({ msgs: 1, recalls: 0 });
  });

  it('recalls: cs1 and cs2 each recall their own local-1; both groups get the recall, a member of both gets two', async () => {
    const t = 'rec';
    const [cs1, cs2] = [
      { tenant: t, user: 'cs1' },
      { tenant: t, user: 'cs2' },
    ];
    await messaging.createGroup(cs1, { name: 'r1', id: 'r1', members: ['m1', 'both'] });
    await messaging.createGroup(cs2, { name: 'r2', id: 'r2', members: ['m2', 'both'] });
    await messaging.send(cs1, { appinfo: LOCAL, to: { group: 'r1' }, ...text('from cs1') });
    await messaging.send(cs2, { appinfo: LOCAL, to: { group: 'r2' }, ...text('from cs2') });
    await settled();
    await whileHeld(async () => {
      await messaging.recall(cs1, LOCAL);
      await messaging.recall(cs2, LOCAL);
    });
    expect(await holds(t, 'm1', 'cs1')).toEqual({ msgs: 1, recalls: 1 });
    expect(await holds(t, 'm2', 'cs2')).toEqual({ msgs: 1, recalls: 1 });
    // One inbox holding both messages: each recall entry names its message's sender.
    expect(await holds(t, 'both', 'cs1')).toEqual({ msgs: 1, recalls: 1 });
    expect(await holds(t, 'both', 'cs2')).toEqual({ msgs: 1, recalls: 1 });
  });

  it('after-send: cs1 and cs2 both send local-1; the app hears of both', async () => {
    const t = 'aft';
    await whileHeld(async () => {
      await messaging.send({ tenant: t, user: 'cs1' }, { appinfo: LOCAL, to: { user: 'p1' }, ...text('from cs1') });
      await messaging.send({ tenant: t, user: 'cs2' }, { appinfo: LOCAL, to: { user: 'p2' }, ...text('from cs2') });
    });
    const heard = receiver
      .accepted()
      .map((c) => c.json as { tenant: string; from: string; appinfo: string })
      .filter((j) => j.tenant === t && j.appinfo === LOCAL)
      .map((j) => j.from)
      .sort();
    expect(heard).toEqual(['cs1', 'cs2']);
  });

  it('the longest ids fit the jobs table: between 64-character ids, a 128-character CJK appinfo is read, receipted, heard of', async () => {
    const [amy, bob] = [
      { tenant: LONG_TENANT, user: 'a'.repeat(64) },
      { tenant: LONG_TENANT, user: 'b'.repeat(64) },
    ];
    const appinfo = '中'.repeat(128);
    await messaging.send(amy, { appinfo, to: { user: bob.user }, ...text('long') });
    const copy = (await inbox(LONG_TENANT, bob.user)).find((e) => e.kind === 'msg' && e.appinfo === appinfo);
    // The receipt job's id holds the tenant, both users and the appinfo: over 512 bytes.
    await messaging.read(bob, [copy!.seq]);
    await settled();
    expect((await inbox(LONG_TENANT, amy.user)).filter((e) => e.kind === 'receipt').map((e) => e.readBy)).toEqual([[bob.user]]);
    expect(receiver.accepted().filter((c) => (c.json as { appinfo?: string }).appinfo === appinfo)).toHaveLength(1);
  });

  it('the two notify jobs: user x offline, and group x with a message whose appinfo is the first seq of x; both run', async () => {
    const nrig = await openNotifyRig('server-ids-notify');
    // The app is down: x's notification job fails and stays pending, retried.
    const app = await startHookReceiver({ secret: NOTIFY_SECRET, mode: { kind: 'status', status: 500 } });
    const t = 'nt';
    const callsForX = () => app.calls.map((c) => c.json as NotifyBody).filter((b) => b.user === 'x');
    try {
      nrig.hooks.set(t, { secret: NOTIFY_SECRET, notifyUrl: app.url, notifyWindowMs: 50 });
      await nrig.messaging.send({ tenant: t, user: 'a' }, { appinfo: 'to-x', to: { user: 'x' }, ...text('hi x') });
      await until('a failed notify call for x', () => callsForX().length > 0);
      const firstSeq = String(callsForX()[0]!.entries[0]!.seq);
      // Group `x` (ids of groups and users are separate), huge: its messages are pushed by a notify job.
      const pushed: PushMessage[] = [];
      nrig.deps.push.subscribe({ inbox: inboxKey(t, 'm1'), onPush: (msg) => pushed.push(msg) });
      const owner = { tenant: t, user: 'o' };
      expect(await nrig.messaging.createGroup(owner, { name: 'x', id: 'x', members: ['m1', 'f1', 'f2', 'f3'] })).toMatchObject({
        tier: 'huge',
      });
      await nrig.messaging.send(owner, { appinfo: firstSeq, to: { group: 'x' }, ...text('in group x') });
      await until('no pending group push job', async () => (await nrig.engine.jobs.list({ queue: NOTIFY_QUEUE })).length === 0);
      expect(pushed.filter((p) => p.group === 'x').flatMap((p) => p.entries.map((e) => e.appinfo))).toEqual([firstSeq]);
      app.setMode({ kind: 'ok' });
      await until('x notified once the app is back', () => app.accepted().some((c) => (c.json as NotifyBody).user === 'x'));
    } finally {
      await nrig.close();
      await app.close();
    }
  });
});
