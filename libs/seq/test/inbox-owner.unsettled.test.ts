/**
 * An append that fails after its write landed (a write timeout, a connection lost after the
 * write went out: what a Cassandra restart does) leaves entries nobody was told of. The owner
 * settles them at its next head read: the append listener (offline notifications) and the push
 * are told of exactly those that landed, once; of those that did not, nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry, InboxKey, NewEntry, TimelineStore } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import { InboxOwner } from '../src/index.ts';
import { MemoryLogger, RecordingPushBus } from './fakes.ts';
import { inbox, msg } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-seq-unsettled-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Failure = 'after-write' | 'before-write' | undefined;

/** The engine's timeline, whose next append can be made to fail before or after it writes. */
function failingOnce(inner: TimelineStore): { timeline: TimelineStore; failNext: (how: Failure) => void } {
  let next: Failure;
  const timeline = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'append') return Reflect.get(target, prop, receiver) as unknown;
      return async (input: Parameters<TimelineStore['append']>[0]) => {
        const how = next;
        next = undefined;
        if (how === 'before-write') throw new Error('write timeout (not applied)');
        const out = await target.append(input);
        if (how === 'after-write') throw new Error('write timeout (applied)');
        return out;
      };
    },
  });
  return { timeline, failNext: (how) => (next = how) };
}

async function rigAt(dir: string, maxUnsettledEntries?: number) {
  const engine = await openEmbeddedEngine({ dir: join(root, dir) });
  const { timeline, failNext } = failingOnce(engine.timeline);
  const told: Array<{ inbox: InboxKey; entries: Entry[] }> = [];
  const push = new RecordingPushBus();
  const logger = new MemoryLogger();
  const owner = new InboxOwner({
    timeline,
    ceilings: engine.ceilings,
    push,
    logger,
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
    onAppended: (i, entries) => told.push({ inbox: i, entries }),
    ...(maxUnsettledEntries !== undefined && { maxUnsettledEntries }),
  });
  const close = async () => {
    await owner.close();
    await engine.close();
  };
  const stored = async (i: InboxKey) => (await engine.timeline.readAfter({ inbox: i, afterSeq: 0, limit: 100 })).map((e) => e.appinfo);
  /** An append whose store write fails `how`: rejected, whether or not it landed. */
  const failedAppend = async (how: Failure, i: InboxKey, entries: NewEntry[]) => {
    failNext(how);
    await expect(owner.append({ inbox: i, entries })).rejects.toThrow(how === 'after-write' ? '(applied)' : '(not applied)');
  };
  return { owner, failedAppend, told, push, logger, stored, close };
}

const toldAppinfos = (told: Array<{ entries: Entry[] }>) => told.flatMap((t) => t.entries.map((e) => e.appinfo));
const pushedAppinfos = (push: RecordingPushBus, i: InboxKey) => push.forInbox(i).flatMap((m) => m.entries.map((e) => e.appinfo));

describe('InboxOwner: an append that failed but landed', () => {
  it('the resend answers duplicate, and the listener and the push are told of the entry once', async () => {
    const r = await rigAt('resend');
    const bob = inbox('bob');
    const m = msg('alice', 'hello');
    await r.failedAppend('after-write', bob, [m]);
    expect(r.told).toEqual([]);
    const [again] = await r.owner.append({ inbox: bob, entries: [m] });
    expect(again?.duplicate).toBe(true);
    expect(await r.stored(bob)).toEqual([m.appinfo]);
    expect(toldAppinfos(r.told)).toEqual([m.appinfo]);
    expect(pushedAppinfos(r.push, bob)).toEqual([m.appinfo]);
    expect(r.owner.unsettledAppends).toEqual({ held: 0, landed: 1, dropped: 0 });
    await r.close();
  });

  it('with no resend, the next append tells of the landed batch first, then of its own, in seq order', async () => {
    const r = await rigAt('next');
    const bob = inbox('bob');
    await r.owner.append({ inbox: bob, entries: [msg('alice', 'before')] });
    const batch = [msg('alice', 'a'), msg('carol', 'b')];
    await r.failedAppend('after-write', bob, batch);
    await r.owner.append({ inbox: bob, entries: [msg('dave', 'after')] });
    const stored = await r.stored(bob);
    expect(stored).toHaveLength(4);
    expect(toldAppinfos(r.told)).toEqual(stored);
    const seqs = r.told.flatMap((t) => t.entries.map((e) => e.seq));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(pushedAppinfos(r.push, bob)).toEqual(stored);
    await r.close();
  });

  it('is told of only once a later store write succeeds (a deposed owner tells of nothing)', async () => {
    const r = await rigAt('after-success');
    const bob = inbox('bob');
    const landed = msg('alice', 'landed');
    await r.failedAppend('after-write', bob, [landed]);
    // The next write fails too (as a fenced store refuses a deposed owner): the landed entry was
    // read back, but nobody is told.
    await r.failedAppend('before-write', bob, [msg('alice', 'refused')]);
    expect(r.told).toEqual([]);
    expect(r.push.forInbox(bob)).toEqual([]);
    const next = msg('alice', 'next');
    await r.owner.append({ inbox: bob, entries: [next] });
    expect(toldAppinfos(r.told)).toEqual([landed.appinfo, next.appinfo]);
    expect(pushedAppinfos(r.push, bob)).toEqual([landed.appinfo, next.appinfo]);
    expect(r.owner.unsettledAppends).toEqual({ held: 0, landed: 1, dropped: 0 });
    await r.close();
  });

  it('an append that did not land tells nobody, at the resend or later', async () => {
    const r = await rigAt('not-landed');
    const bob = inbox('bob');
    const m = msg('alice', 'lost-write');
    await r.failedAppend('before-write', bob, [m]);
    await r.owner.append({ inbox: bob, entries: [msg('alice', 'other')] });
    expect(toldAppinfos(r.told)).toEqual(await r.stored(bob));
    expect(r.owner.unsettledAppends).toEqual({ held: 0, landed: 0, dropped: 0 });
    const [resent] = await r.owner.append({ inbox: bob, entries: [m] });
    expect(resent?.duplicate).toBe(false);
    expect(toldAppinfos(r.told)).toEqual(await r.stored(bob));
    await r.close();
  });

  it('past the bound a failed append is not kept: logged and counted, and the resend is still a duplicate', async () => {
    const r = await rigAt('bound', 1);
    const bob = inbox('bob');
    const batch = [msg('alice', 'x'), msg('alice', 'y')];
    await r.failedAppend('after-write', bob, batch);
    expect(r.owner.unsettledAppends).toEqual({ held: 0, landed: 0, dropped: 1 });
    expect(r.logger.records.some((l) => l.msg?.includes('bound reached'))).toBe(true);
    const again = await r.owner.append({ inbox: bob, entries: batch });
    expect(again.map((o) => o.duplicate)).toEqual([true, true]);
    await r.close();
  });
});
