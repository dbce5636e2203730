/** InboxOwner.appendThen: when its follow-up starts, relative to the first append's later work. */
import { describe, expect, it } from 'vitest';
import { inbox, msg, rig } from './harness.ts';
import { deferred, tick } from './fakes.ts';

const settle = async () => {
  for (let i = 0; i < 10; i++) await tick();
};

describe('InboxOwner.appendThen', () => {
  it('starts the follow-up once the first append is durable, while that append still has a cache write to go', async () => {
    const r = rig();
    const o = r.owner(1);
    const [a, b] = [inbox('alice'), inbox('bob')];
    const cacheWrite = deferred();
    r.timeline.laterWork = cacheWrite.promise;
    let resolved = false;
    const chained = o.appendThen({
      inbox: a,
      entries: [msg('alice', 'hi', 'hi-1')],
      next: { inbox: b, entries: [msg('alice', 'hi', 'hi-1')], timeoutMs: 5000 },
    });
    void chained.then(() => {
      resolved = true;
    });
    await settle();
    // The follow-up reached the store although the first append has not resolved.
    expect(r.timeline.all(b).map((e) => e.appinfo)).toEqual(['hi-1']);
    expect(resolved).toBe(false);
    cacheWrite.resolve();
    expect(await chained).toEqual({ outcomes: [{ seq: 1, duplicate: false }], next: 'appended' });
    // Each inbox still pushes only after its own append resolved.
    expect(r.push.forInbox(a).map((p) => p.entries.map((e) => e.seq))).toEqual([[1]]);
    expect(r.push.forInbox(b).map((p) => p.entries.map((e) => e.seq))).toEqual([[1]]);
    await o.close();
  });

  it('without a durable signal from the store, runs the follow-up after the first append resolved', async () => {
    const r = rig();
    const o = r.owner(1);
    const [a, b] = [inbox('alice'), inbox('bob')];
    const order: string[] = [];
    r.timeline.afterAppend = (ib) => order.push(ib === a ? 'a' : 'b');
    const chained = await o.appendThen({
      inbox: a,
      entries: [msg('alice', 'x', 'x-1')],
      next: { inbox: b, entries: [msg('alice', 'x', 'x-1')], timeoutMs: 5000 },
    });
    expect(chained.next).toBe('appended');
    expect(order).toEqual(['a', 'b']);
    await o.close();
  });

  it('skips the follow-up of a resend, durable signal or not', async () => {
    const r = rig();
    const o = r.owner(1);
    const [a, b] = [inbox('alice'), inbox('bob')];
    const sent = msg('alice', 'y', 'y-1');
    await o.append({ inbox: a, entries: [sent] });
    r.timeline.laterWork = Promise.resolve();
    // A fresh owner knows no recent appinfos: the store finds the duplicate and says so when durable.
    const fresh = r.owner(2);
    const chained = await fresh.appendThen({
      inbox: a,
      entries: [msg('alice', 'y', 'y-1')],
      next: {
        inbox: b,
        entries: [msg('alice', 'y', 'y-1')],
        timeoutMs: 5000,
      },
    });
    expect(chained).toEqual({ outcomes: [{ seq: 1, duplicate: true, original: { ...sent, seq: 1 } }], next: 'skipped' });
    expect(r.timeline.all(b)).toEqual([]);
    await Promise.all([o.close(), fresh.close()]);
  });

  it('throws when the first append fails after it was durable; the follow-up it started stays (idempotent by appinfo)', async () => {
    const r = rig();
    const o = r.owner(1);
    const [a, b] = [inbox('alice'), inbox('bob')];
    const cacheWrite = deferred();
    r.timeline.laterWork = cacheWrite.promise.then(() => {
      throw new Error('late failure');
    });
    r.timeline.laterWork.catch(() => undefined);
    const chained = o.appendThen({
      inbox: a,
      entries: [msg('alice', 'z', 'z-1')],
      next: { inbox: b, entries: [msg('alice', 'z', 'z-1')], timeoutMs: 5000 },
    });
    chained.catch(() => undefined);
    await settle();
    cacheWrite.resolve();
    await expect(chained).rejects.toThrow('late failure');
    expect(r.timeline.all(b).map((e) => e.appinfo)).toEqual(['z-1']);
    await o.close();
  });
});
