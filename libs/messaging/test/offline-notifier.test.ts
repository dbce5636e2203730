/**
 * The OfflineNotifier's windows on their own (a recording queue, a presence the test sets):
 * one job per window with its id and payload, the window bound (the oldest closes early, none
 * lost), close() flushing open windows and enqueueing at once afterwards, a failing queue only
 * counted, and "cannot know" presence treated as offline.
 */
import { describe, expect, it } from 'vitest';
import { inboxKey, resolveHooks, silentLogger, type Entry, type InboxKey, type Json, type WorkQueue } from '@seqline/core';
import { OFFLINE_NOTIFY_QUEUE, OfflineNotifier, type OfflineNotifyJob } from '../src/index.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function setup(options: { maxWindows?: number; windowMs?: number; failEnqueue?: boolean } = {}) {
  const jobs: Array<{ queue: string; id: string; payload: OfflineNotifyJob }> = [];
  const queue: Pick<WorkQueue, 'enqueue'> = {
    enqueue: async (q: string, id: string, payload: Json) => {
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
    ...(options.maxWindows !== undefined && { maxWindows: options.maxWindows }),
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
  it('one job per window: queue, id notify:<tenant>:<user>:<firstSeq>, the items in order', async () => {
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
        id: `offline-notify:t:bob:${a.seq}`,
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

  it('at maxWindows the oldest window closes early: bounded memory, nothing lost', async () => {
    const { jobs, notifier } = setup({ maxWindows: 2 });
    for (const user of ['u1', 'u2', 'u3', 'u4']) notifier.listener(inboxKey('t', user), [msgTo('alice')]);
    expect(notifier.stats().open).toBe(2);
    await sleep(10);
    expect(jobs.map((j) => j.payload.user)).toEqual(['u1', 'u2']);
    expect(notifier.stats().closedEarly).toBe(2);
    await notifier.close();
    expect(jobs.map((j) => j.payload.user)).toEqual(['u1', 'u2', 'u3', 'u4']);
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
