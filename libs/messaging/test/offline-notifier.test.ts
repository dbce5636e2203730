/**
 * The OfflineNotifier's windows on their own (a recording queue, a presence the test sets):
 * one job per window with its id and payload, the bound on items held across windows (the
 * oldest windows close early and notify at once, none lost, nothing held past the bound),
 * close() flushing open windows and enqueueing at once afterwards, a failing queue never
 * thrown into the append (its retries: offline-notifier-retries.test.ts), and "cannot know"
 * presence treated as offline.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inboxKey, resolveHooks, silentLogger, type Entry, type InboxKey, type WorkQueue } from '@seqline/core';
import { eventually } from '@seqline/testing';
import { OFFLINE_NOTIFY_QUEUE, OfflineNotifier, type OfflineNotifyJob } from '../src/index.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function setup(options: { maxHeldItems?: number; maxItemsPerWindow?: number; windowMs?: number; failEnqueue?: boolean } = {}) {
  const jobs: Array<{ queue: string; id: string; payload: OfflineNotifyJob }> = [];
  const queue: Pick<WorkQueue, 'enqueue'> = {
    enqueue: async ({ queue: q, id, payload }) => {
      if (options.failEnqueue) throw new Error('queue down');
      jobs.push({ queue: q, id, payload: payload as unknown as OfflineNotifyJob });
    },
  };
  const online = new Map<InboxKey, boolean | undefined>();
  const notifier = new OfflineNotifier({
    queue,
    hooks: { of: () => resolveHooks({}, { notifyUrl: 'http://127.0.0.1:9/n', notifyWindowMs: options.windowMs ?? 10_000 }) },
    presence: { isOnline: (i) => online.get(i) },
    logger: silentLogger,
    ...(options.maxHeldItems !== undefined && { maxHeldItems: options.maxHeldItems }),
    ...(options.maxItemsPerWindow !== undefined && { maxItemsPerWindow: options.maxItemsPerWindow }),
  });
  return { jobs, online, notifier };
}

let seq = 0;
const msgTo = (from: string): Entry => ({
  seq: ++seq,
  kind: 'msg',
  appinfo: `a${seq}`,
  conv: { type: 'user', id: from },
  from,
  sendTime: 1,
});

describe('OfflineNotifier', () => {
  it('one job per window: queue, id offline-notify:<tenant>:<user>:<lowest seq>:<highest seq>, the items in order', async () => {
    const { jobs, notifier } = setup({ windowMs: 30 });
    const bob = inboxKey('t', 'bob');
    const a = msgTo('alice');
    const b = msgTo('carol');
    notifier.listener(bob, [a]);
    notifier.listener(bob, [b]);
    expect(notifier.stats().open).toBe(1);
    await sleep(80);
    expect(jobs).toEqual([
      {
        queue: OFFLINE_NOTIFY_QUEUE,
        id: `offline-notify:t:bob:${a.seq}:${b.seq}`,
        payload: {
          tenant: 't',
          user: 'bob',
          entries: [
            { seq: a.seq, conv: { type: 'user', id: 'alice' }, from: 'alice', appinfo: a.appinfo, mention: false },
            { seq: b.seq, conv: { type: 'user', id: 'carol' }, from: 'carol', appinfo: b.appinfo, mention: false },
          ],
        },
      },
    ]);
    expect(notifier.stats()).toMatchObject({ open: 0, enqueued: 1 });
  });

  it('a window that tells an old entry again is named apart from the one that first carried it (campaign round 3f95fa62)', async () => {
    const { jobs, notifier } = setup();
    const bob = inboxKey('t', 'bob');
    const [a, b, c] = [msgTo('alice'), msgTo('alice'), msgTo('carol')];
    notifier.listener(bob, [a, b]);
    await notifier.flush();
    // A resend found `a` stored by an earlier owner and told it again, beside a new entry.
    notifier.listener(bob, [a]);
    notifier.listener(bob, [c]);
    await notifier.flush();
    // The same window told twice keeps its name: the queue's dedup drops the copy.
    notifier.listener(bob, [b, a]);
    await notifier.flush();
    expect(jobs.map((j) => j.id)).toEqual([
      `offline-notify:t:bob:${a.seq}:${b.seq}`,
      `offline-notify:t:bob:${a.seq}:${c.seq}`,
      `offline-notify:t:bob:${a.seq}:${b.seq}`,
    ]);
  });

  it('presence unknown (undefined) counts as offline; online at append opens no window', async () => {
    const { jobs, online, notifier } = setup({ windowMs: 10 });
    const bob = inboxKey('t', 'bob');
    const carol = inboxKey('t', 'carol');
    online.set(bob, undefined);
    online.set(carol, true);
    notifier.listener(bob, [msgTo('alice')]);
    notifier.listener(carol, [msgTo('alice')]);
    expect(notifier.stats().open).toBe(1);
    await sleep(50);
    expect(jobs.map((j) => j.payload.user)).toEqual(['bob']);
  });

  it('at maxHeldItems the oldest windows close early and notify at once: nothing held past the bound, nothing lost', async () => {
    const { jobs, notifier } = setup({ maxHeldItems: 4 });
    const held = () => notifier.stats().heldItems;
    const seqsOf = (user: string) => jobs.filter((j) => j.payload.user === user).map((j) => j.payload.entries.map((e) => e.seq));
    const u1 = [msgTo('alice'), msgTo('alice')];
    const u2 = [msgTo('alice'), msgTo('carol')];
    notifier.listener(inboxKey('t', 'u1'), u1);
    notifier.listener(inboxKey('t', 'u2'), u2);
    expect(notifier.stats()).toMatchObject({ open: 2, heldItems: 4, closedEarly: 0 });
    // One more item: the oldest window (u1's) closes now and its notification goes out.
    const u3 = msgTo('alice');
    notifier.listener(inboxKey('t', 'u3'), [u3]);
    expect(notifier.stats()).toMatchObject({ open: 2, heldItems: 3, closedEarly: 1 });
    await eventually(() => expect(seqsOf('u1')).toEqual([u1.map((e) => e.seq)]));
    // u2's own window is now the oldest: it goes out with what it held, the new items open a new one.
    const u2more = [msgTo('alice'), msgTo('alice')];
    notifier.listener(inboxKey('t', 'u2'), u2more);
    expect(held()).toBeLessThanOrEqual(4);
    expect(notifier.stats()).toMatchObject({ open: 2, heldItems: 3, closedEarly: 2 });
    await notifier.close();
    expect(seqsOf('u2')).toEqual([u2.map((e) => e.seq), u2more.map((e) => e.seq)]);
    expect(seqsOf('u3')).toEqual([[u3.seq]]);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
    expect(notifier.stats()).toMatchObject({ open: 0, heldItems: 0, enqueued: 4, failed: 0 });
  });

  it('whatever the appends, heldItems never passes the bound and every item is notified once or counted as omitted', async () => {
    const step = fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 6 }));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 12 }), fc.array(step, { maxLength: 40 }), async (bound, steps) => {
        // A window keeps at most min(maxItemsPerWindow, bound) items; the rest of its items are
        // omitted (counted in the badge), the one rule that leaves an item out of a notification.
        const { jobs, notifier } = setup({ maxHeldItems: bound, maxItemsPerWindow: 100 });
        const sent: number[] = [];
        for (const [user, count] of steps) {
          const entries = Array.from({ length: count }, () => msgTo('alice'));
          notifier.listener(inboxKey('t', `u${user}`), entries);
          sent.push(...entries.map((e) => e.seq));
          expect(notifier.stats().heldItems).toBeLessThanOrEqual(bound);
        }
        await notifier.close();
        const notified = jobs.flatMap((j) => j.payload.entries.map((e) => e.seq));
        expect(new Set(notified).size).toBe(notified.length);
        expect(notified.every((seq) => sent.includes(seq))).toBe(true);
        const { itemsOmitted, heldItems, failed } = notifier.stats();
        expect(notified.length + itemsOmitted).toBe(sent.length);
        if (steps.every(([, count]) => count <= bound) && new Set(steps.map(([user]) => user)).size === steps.length) {
          expect(itemsOmitted).toBe(0); // one append per user, each within the bound: nothing omitted
        }
        expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
        expect({ heldItems, failed }).toEqual({ heldItems: 0, failed: 0 });
      }),
      { numRuns: 200 },
    );
  });

  it('close() flushes open windows, and afterwards enqueues at once', async () => {
    const { jobs, notifier } = setup();
    notifier.listener(inboxKey('t', 'bob'), [msgTo('alice')]);
    await notifier.close();
    expect(jobs).toHaveLength(1);
    notifier.listener(inboxKey('t', 'carol'), [msgTo('alice')]);
    await notifier.flush();
    expect(jobs.map((j) => j.payload.user)).toEqual(['bob', 'carol']);
    expect(notifier.stats().open).toBe(0);
  });

  it('a failing queue is counted and logged, never thrown into the append', async () => {
    const { notifier } = setup({ failEnqueue: true });
    expect(() => notifier.listener(inboxKey('t', 'bob'), [msgTo('alice')])).not.toThrow();
    await notifier.close();
    expect(notifier.stats()).toMatchObject({ enqueued: 0, failed: 1 });
  });
});
