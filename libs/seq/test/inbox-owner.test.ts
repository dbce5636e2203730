import { describe, expect, it } from 'vitest';
import { FencedError, shardOf } from '@seqline/core';
import type { AppendOutcome } from '@seqline/core';
import { InboxOwnerClosedError, ShardNotOwnedError, sectionOfShard } from '../src/index.ts';
import { ManualClock, inbox, msg, rig } from './harness.ts';
import { deferred, tick } from './fakes.ts';

describe('InboxOwner append', () => {
  it('allocates increasing seqs, stores them, pushes after the append with prevSeq', async () => {
    const r = rig();
    const o = r.owner(1);
    const a = inbox('alice');
    expect(await o.append({ inbox: a, entries: [msg('bob', 'hi'), msg('bob', 'there')] })).toEqual([
      { seq: 1, duplicate: false },
      { seq: 2, duplicate: false },
    ]);
    expect(await o.append({ inbox: a, entries: [msg('carol', 'yo')] })).toEqual([{ seq: 3, duplicate: false }]);
    expect(r.timeline.all(a).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(r.push.forInbox(a).map((p) => [p.prevSeq, p.entries.map((e) => e.seq)])).toEqual([
      [0, [1, 2]],
      [2, [3]],
    ]);
    expect(await o.headSeq(a)).toBe(3);
    await o.close();
  });

  it('continues after what the store holds (takeover): current = max(ceiling, store head)', async () => {
    const r = rig();
    const a = inbox('alice');
    await r.timeline.append({ inbox: a, entries: [{ ...msg('x', 'old'), seq: 77 }] });
    const o = r.owner(1);
    const [out] = await o.append({ inbox: a, entries: [msg('x', 'new')] });
    expect(out?.seq).toBe(78);
    expect(r.push.forInbox(a)[0]?.prevSeq).toBe(77);
  });

  it('200 concurrent appends to one inbox: FIFO, strictly increasing, merged into few store calls', async () => {
    const r = rig();
    const o = r.owner(1, { step: 16 }); // many raises in between
    const a = inbox('alice');
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => o.append({ inbox: a, entries: [msg('b', `m${i}`)] })));
    const seqs = results.map((res) => (res[0] as AppendOutcome).seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
    expect(new Set(seqs).size).toBe(200);
    expect(r.timeline.all(a).map((e) => (e.body as { text: string }).text)).toEqual(seqs.map((_, i) => `m${i}`));
    expect(r.timeline.appendCalls).toBeLessThan(20);
  });

  it('never writes or returns a seq above the durable ceiling (slow ceiling store)', async () => {
    const r = rig();
    r.ceilings.beforeRaise = () => new Promise((res) => setTimeout(res, Math.random() * 4));
    const section = (u: string): string => sectionOfShard(shardOf(inbox(u), 4));
    r.timeline.beforeAppend = (key, entries) => {
      for (const e of entries) expect(e.seq).toBeLessThanOrEqual(r.ceilings.durableCeiling(section(key.slice(3))));
    };
    const o = r.owner(1, { step: 5 });
    await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const user = `u${i % 6}`;
        const out = await o.append({ inbox: inbox(user), entries: [msg('b', `m${i}`), msg('b', `n${i}`)] });
        for (const x of out) expect(x.seq).toBeLessThanOrEqual(r.ceilings.durableCeiling(section(user)));
      }),
    );
    // Events: every section claimed first, then raised monotonically.
    const bySection = new Map<string, number[]>();
    for (const e of r.ceilings.events) bySection.set(e.section, [...(bySection.get(e.section) ?? []), e.ceiling]);
    for (const cs of bySection.values()) expect(cs).toEqual([...cs].sort((x, y) => x - y));
  });

  it('dedups: same appinfo twice concurrently → one copy, same seq, the second is duplicate', async () => {
    const r = rig();
    const o = r.owner(1);
    const a = inbox('alice');
    const e = msg('bob', 'once');
    const [first, second] = await Promise.all([o.append({ inbox: a, entries: [e] }), o.append({ inbox: a, entries: [e] })]);
    expect(first).toEqual([{ seq: 1, duplicate: false }]);
    // Merged into one store append: the store answers the repeat with the first as stored.
    expect(second).toEqual([{ seq: 1, duplicate: true, original: { ...e, seq: 1 } }]);
    // A later resend is answered from memory (its seq only) without allocating or writing.
    const calls = r.timeline.appendCalls;
    expect(await o.append({ inbox: a, entries: [e, e] })).toEqual([
      { seq: 1, duplicate: true },
      { seq: 1, duplicate: true },
    ]);
    expect(r.timeline.appendCalls).toBe(calls);
    expect(await o.append({ inbox: a, entries: [msg('bob', 'next')] })).toEqual([{ seq: 2, duplicate: false }]);
    expect(r.timeline.all(a)).toHaveLength(2);
    expect(r.push.forInbox(a).map((p) => p.prevSeq)).toEqual([0, 1]);
  });

  it('a resend the owner no longer remembers is deduped by the store: same seq, one copy, no push', async () => {
    const r = rig();
    const o = r.owner(1, { maxRecentAppinfos: 0 });
    const a = inbox('alice');
    const e = msg('bob', 'once');
    expect(await o.append({ inbox: a, entries: [e] })).toEqual([{ seq: 1, duplicate: false }]);
    expect(await o.append({ inbox: a, entries: [e, msg('bob', 'next')] })).toEqual([
      { seq: 1, duplicate: true, original: { ...e, seq: 1 } },
      { seq: 3, duplicate: false },
    ]);
    expect(r.timeline.all(a).map((x) => x.seq)).toEqual([1, 3]); // seq 2 was burnt on the resend
    expect(r.push.forInbox(a).map((p) => [p.prevSeq, p.entries.map((x) => x.seq)])).toEqual([
      [0, [1]],
      [1, [3]],
    ]);
  });

  it('push carries the right prevSeq across merged batches and across a failed append', async () => {
    const r = rig();
    const o = r.owner(1);
    const a = inbox('alice');
    await Promise.all(Array.from({ length: 30 }, (_, i) => o.append({ inbox: a, entries: [msg('b', `m${i}`)] })));
    r.timeline.beforeAppend = () => {
      r.timeline.beforeAppend = undefined;
      throw new Error('disk full');
    };
    await expect(o.append({ inbox: a, entries: [msg('b', 'lost')] })).rejects.toThrow('disk full');
    expect(await o.headSeq(a)).toBe(30);
    await Promise.all(Array.from({ length: 10 }, (_, i) => o.append({ inbox: a, entries: [msg('b', `after${i}`)] })));
    const pushes = r.push.forInbox(a);
    let expectedPrev = 0;
    for (const p of pushes) {
      expect(p.prevSeq).toBe(expectedPrev);
      expectedPrev = p.entries.at(-1)?.seq as number;
    }
    const stored = r.timeline.all(a).map((e) => e.seq);
    expect(stored).toHaveLength(40);
    expect(stored[30]).toBeGreaterThan(31); // the failed batch's seq is burnt, never reused
  });

  it('an append that landed but reported failure (timeout): the next push links to what the store holds', async () => {
    const r = rig();
    const o = r.owner(1);
    const a = inbox('alice');
    await o.append({ inbox: a, entries: [msg('b', 'one')] });
    r.timeline.afterAppend = () => {
      r.timeline.afterAppend = undefined;
      throw new Error('timeout');
    };
    const landed = msg('b', 'landed');
    await expect(o.append({ inbox: a, entries: [landed] })).rejects.toThrow('timeout');
    const [resent] = await o.append({ inbox: a, entries: [landed] }); // the client resends: the original seq comes back
    expect(resent).toEqual({ seq: 2, duplicate: true, original: { ...landed, seq: 2 } });
    await o.append({ inbox: a, entries: [msg('b', 'three')] });
    // The landed entry is pushed when the resend reads the head (unsettled-appends.ts), from the head before it.
    expect(r.push.forInbox(a).map((p) => [p.prevSeq, p.entries.map((e) => e.seq)])).toEqual([
      [0, [1]],
      [1, [2]],
      [2, [4]], // the resend burnt seq 3 (deduped inside the store)
    ]);
  });

  it('a failing store append leaves the owner usable; a poison op in a merged batch fails alone', async () => {
    const r = rig();
    const o = r.owner(1);
    const a = inbox('alice');
    r.timeline.beforeAppend = (_k, entries) => {
      if (entries.some((e) => (e.body as { text?: string }).text === 'poison')) throw new Error('cannot encode');
    };
    const settled = await Promise.allSettled([
      o.append({ inbox: a, entries: [msg('b', 'ok1')] }),
      o.append({ inbox: a, entries: [msg('b', 'poison')] }),
      o.append({ inbox: a, entries: [msg('b', 'ok2')] }),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(r.timeline.all(a).map((e) => (e.body as { text: string }).text)).toEqual(['ok1', 'ok2']);
    r.timeline.beforeAppend = () => {
      throw new Error('store down');
    };
    for (let i = 0; i < 3; i++) await expect(o.append({ inbox: a, entries: [msg('b', `x${i}`)] })).rejects.toThrow('store down');
    r.timeline.beforeAppend = undefined;
    const [out] = await o.append({ inbox: a, entries: [msg('b', 'back')] });
    const seqs = r.timeline.all(a).map((e) => e.seq);
    expect(out?.seq).toBe(seqs.at(-1));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
  });
});

describe('InboxOwner ownership, fencing, restart', () => {
  it('rejects inboxes of shards it does not own and claims only its sections', async () => {
    const r = rig();
    const users = Array.from({ length: 40 }, (_, i) => `user${i}`);
    const mine = users.find((u) => shardOf(inbox(u), 4) === 2) as string;
    const other = users.find((u) => shardOf(inbox(u), 4) !== 2) as string;
    const o = r.owner(1, { ownedShards: [2] });
    await o.start();
    expect(o.owns(inbox(mine))).toBe(true);
    await expect(o.append({ inbox: inbox(other), entries: [msg('b', 'x')] })).rejects.toBeInstanceOf(ShardNotOwnedError);
    await expect(o.addReceipt({ inbox: inbox(other), appinfo: 'a', readers: ['b'] })).rejects.toBeInstanceOf(ShardNotOwnedError);
    await expect(o.headSeq(inbox(other))).rejects.toBeInstanceOf(ShardNotOwnedError);
    expect((await o.append({ inbox: inbox(mine), entries: [msg('b', 'x')] }))[0]?.seq).toBe(1);
    expect([...r.ceilings.sections.keys()]).toEqual([sectionOfShard(2)]);
  });

  it('a fenced owner throws FencedError and never writes above its durable ceiling', async () => {
    const r = rig();
    const a = inbox('alice');
    const old = r.owner(1, { step: 5 });
    await old.append({ inbox: a, entries: [msg('b', 'first')] });
    const fresh = r.owner(2, { step: 5 });
    await fresh.start(); // claims every section with epoch 2
    const oldCeiling = Math.max(...r.ceilings.events.filter((e) => e.epoch === 1).map((e) => e.ceiling));
    let fenced = 0;
    for (let i = 0; i < 12; i++) {
      await old.append({ inbox: a, entries: [msg('b', `z${i}`)] }).catch((err: unknown) => {
        expect(err).toBeInstanceOf(FencedError);
        fenced++;
      });
    }
    expect(fenced).toBeGreaterThan(6);
    await expect(old.append({ inbox: inbox('someone-else'), entries: [msg('b', 'q')] })).rejects.toBeInstanceOf(FencedError);
    expect(Math.max(...r.timeline.all(a).map((e) => e.seq))).toBeLessThanOrEqual(oldCeiling);
    const [next] = await fresh.append({ inbox: a, entries: [msg('b', 'new owner')] });
    expect(next?.seq).toBeGreaterThan(oldCeiling);
  });

  it('restart in the middle of a run: the new epoch continues above everything the old one handed out', async () => {
    const r = rig();
    const handed: Array<{ seq: number; text: string }> = [];
    const stuck = deferred();
    let batches = 0;
    r.timeline.beforeAppend = async (_k, entries) => {
      handed.push(...entries.map((e) => ({ seq: e.seq, text: (e.body as { text: string }).text })));
      // The old owner's later writes hang (a dying process): their seqs are handed out, not stored.
      if (entries.some((e) => (e.body as { text: string }).text.startsWith('m')) && ++batches > 3) await stuck.promise;
    };
    const users = ['a', 'b', 'c'].map(inbox);
    const first = r.owner(1, { step: 8 });
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      inflight.push(first.append({ inbox: users[i % 3]!, entries: [msg('x', `m${i}`)] }));
      if (i % 10 === 9) await tick();
    }
    const second = r.owner(2, { step: 8 });
    const afterSeqs: number[] = [];
    for (const u of users) afterSeqs.push(...(await second.append({ inbox: u, entries: [msg('x', `after-${u}`)] })).map((o) => o.seq));
    stuck.resolve();
    const settled = await Promise.allSettled(inflight);
    const oldSeqs = handed.filter((h) => h.text.startsWith('m')).map((h) => h.seq);
    expect(r.timeline.all(users[0]!).length).toBeGreaterThan(1); // some old writes were stored
    expect(settled.some((x) => x.status === 'rejected')).toBe(true); // the zombie's late writes are refused
    expect(Math.min(...afterSeqs)).toBeGreaterThan(Math.max(...oldSeqs));
    for (const u of users) {
      const seqs = r.timeline.all(u).map((e) => e.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((x, y) => x - y));
    }
  });
});

describe('InboxOwner lifecycle', () => {
  it('close waits for queued work, then refuses new work', async () => {
    const r = rig();
    r.timeline.beforeAppend = () => new Promise((res) => setTimeout(res, 1));
    const o = r.owner(1);
    const pending = Array.from({ length: 50 }, (_, i) => o.append({ inbox: inbox(`u${i % 5}`), entries: [msg('b', `m${i}`)] }));
    let settled = 0;
    for (const p of pending) void p.then(() => settled++);
    await o.close();
    await Promise.resolve();
    expect(settled).toBe(50);
    await expect(o.append({ inbox: inbox('u1'), entries: [msg('b', 'late')] })).rejects.toBeInstanceOf(InboxOwnerClosedError);
  });

  it('evicts idle inbox state and stays correct after re-reading the head', async () => {
    const r = rig();
    const clock = new ManualClock();
    const o = r.owner(1, { clock, idleInboxMs: 1000, maxCachedInboxes: 5 });
    for (let i = 0; i < 12; i++) await o.append({ inbox: inbox(`u${i}`), entries: [msg('b', 'x')] });
    expect(o.cachedInboxes).toBeLessThanOrEqual(5);
    await tick(); // let the last drain loop finish
    clock.t += 1001;
    expect(o.sweepIdle()).toBeGreaterThan(0);
    expect(o.cachedInboxes).toBe(0);
    const [out] = await o.append({ inbox: inbox('u0'), entries: [msg('b', 'again')] });
    expect(out?.seq).toBe(2);
    expect(r.push.forInbox(inbox('u0')).at(-1)?.prevSeq).toBe(1);
    await o.close();
  });
});
