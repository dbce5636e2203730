/**
 * An entry whose owner stored it and went before telling anyone (a `kill -9`; a pause past the
 * lease, after which the fence refuses the late answer) is told of by the next owner when the
 * resend that follows finds it: the push and the append listener (the offline notification),
 * once. A resend of an entry of this owner's own term is not told again. Campaign round
 * `71ef6fc9` (seed s40d): an offline user never notified of a group copy written as its owner
 * was paused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry, InboxKey, NewEntry, TimelineStore } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import type { EmbeddedEngine } from '@seqline/store';
import { InboxOwner, RecentAppinfos } from '../src/index.ts';
import { MemoryLogger, RecordingPushBus } from './fakes.ts';
import { inbox, msg } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-seq-earlier-term-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The engine's timeline, every append of which lands and then fails: an owner that never hears back. */
function landingUnanswered(inner: TimelineStore): TimelineStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'append') return Reflect.get(target, prop, receiver) as unknown;
      return async (input: Parameters<TimelineStore['append']>[0]) => {
        await target.append(input);
        throw new Error('lease lost while the write was in flight');
      };
    },
  });
}

async function ownerOn(engine: EmbeddedEngine, timeline: TimelineStore, recentAppinfos?: RecentAppinfos) {
  const told: Entry[] = [];
  const push = new RecordingPushBus();
  const owner = new InboxOwner({
    timeline,
    ceilings: engine.ceilings,
    push,
    logger: new MemoryLogger(),
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
    onAppended: (_inbox, entries) => told.push(...entries),
    ...(recentAppinfos && { recentAppinfos }),
  });
  return { owner, told, push };
}

/** Entries stored by an owner that then went without telling anyone of them. */
async function storedUntold(engine: EmbeddedEngine, bob: InboxKey, batches: NewEntry[][]): Promise<void> {
  const gone = await ownerOn(engine, landingUnanswered(engine.timeline));
  for (const entries of batches) await expect(gone.owner.append({ inbox: bob, entries })).rejects.toThrow('in flight');
  expect(gone.told).toEqual([]);
  expect(gone.push.published).toEqual([]);
  await gone.owner.close();
}

describe('InboxOwner: a resend finding an entry an earlier owner never told of', () => {
  it('tells the listener and the push of it once, with prevSeq the entry stored before it', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'one') });
    const bob = inbox('bob');
    const m = msg('alice', 'untold');
    const earlier = msg('carol', 'told');
    // Two owners gone in turn: the second's seqs start above the first's ceiling, a gap below m.
    await storedUntold(engine, bob, [[earlier]]);
    await storedUntold(engine, bob, [[m]]);
    const [stored, original] = await engine.timeline.readAfter({ inbox: bob, afterSeq: 0, limit: 10 });

    const next = await ownerOn(engine, engine.timeline);
    const [resent] = await next.owner.append({ inbox: bob, entries: [m] });
    expect(resent).toMatchObject({ seq: original?.seq, duplicate: true });
    expect(original!.seq - stored!.seq).toBeGreaterThan(1);
    expect(next.told.map((e) => e.appinfo)).toEqual([m.appinfo]);
    expect(next.push.forInbox(bob).map((p) => ({ prevSeq: p.prevSeq, seqs: p.entries.map((e) => e.seq) }))).toEqual([
      { prevSeq: stored?.seq, seqs: [original?.seq] },
    ]);
    // Told once: a second resend is answered from memory.
    await next.owner.append({ inbox: bob, entries: [m] });
    expect(next.told).toHaveLength(1);
    expect(next.push.forInbox(bob)).toHaveLength(1);
    await next.owner.close();
    await engine.close();
  });

  it('in a merged append too, beside a new entry', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'many') });
    const bob = inbox('bob');
    const untold = [msg('alice', 'a'), msg('carol', 'b')];
    await storedUntold(engine, bob, [untold]);
    const next = await ownerOn(engine, engine.timeline);
    const fresh = msg('dave', 'new');
    const outcomes = await next.owner.append({ inbox: bob, entries: [untold[1] as NewEntry, fresh] });
    expect(outcomes.map((o) => o.duplicate)).toEqual([true, false]);
    expect(next.told.map((e) => e.appinfo).sort()).toEqual([untold[1]?.appinfo, fresh.appinfo].sort());
    await next.owner.close();
    await engine.close();
  });

  it('does not tell again of an entry of its own term (a resend after it forgot the appinfo)', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'own') });
    const bob = inbox('bob');
    const own = await ownerOn(engine, engine.timeline, new RecentAppinfos(1));
    const m = msg('alice', 'mine');
    await own.owner.append({ inbox: bob, entries: [m] });
    await own.owner.append({ inbox: bob, entries: [msg('alice', 'pushes m out of memory')] });
    const [resent] = await own.owner.append({ inbox: bob, entries: [m] });
    expect(resent?.duplicate).toBe(true);
    expect(own.told.filter((e) => e.appinfo === m.appinfo)).toHaveLength(1);
    expect(own.push.forInbox(bob)).toHaveLength(2);
    await own.owner.close();
    await engine.close();
  });
});
