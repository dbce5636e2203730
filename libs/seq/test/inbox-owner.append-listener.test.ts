/**
 * The owner's append listener (`onAppended`, used by offline notifications): told of exactly
 * the entries each append newly stored — never a duplicate — in append order, and unable to
 * fail or delay an append by throwing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry, InboxKey } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import { InboxOwner } from '../src/index.ts';
import { MemoryLogger, RecordingPushBus } from './fakes.ts';
import { inbox, msg } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-seq-listener-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function ownerWith(dir: string, onAppended: (inbox: InboxKey, entries: Entry[]) => void) {
  const engine = await openEmbeddedEngine({ dir: join(root, dir) });
  const logger = new MemoryLogger();
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const owner = new InboxOwner({
    timeline: engine.timeline,
    ceilings: engine.ceilings,
    push: new RecordingPushBus(),
    logger,
    epoch,
    onAppended,
  });
  return { engine, owner, logger };
}

describe('InboxOwner onAppended', () => {
  it('is told of every newly stored entry once, in seq order, and of no duplicate', async () => {
    const told: Array<{ inbox: InboxKey; seqs: number[] }> = [];
    const { engine, owner } = await ownerWith('basic', (i, entries) => told.push({ inbox: i, seqs: entries.map((e) => e.seq) }));
    const bob = inbox('bob');
    const resend = msg('alice', 'resend');
    await owner.append({ inbox: bob, entries: [resend] });
    await owner.append({ inbox: bob, entries: [resend] }); // a duplicate: not told
    await Promise.all(Array.from({ length: 50 }, (_, i) => owner.append({ inbox: bob, entries: [msg('alice', `m${i}`)] })));
    await owner.append({ inbox: bob, entries: [msg('alice', 'x'), resend, msg('alice', 'y')] }); // merged batch with a duplicate
    const stored = (await engine.timeline.readAfter({ inbox: bob, afterSeq: 0, limit: 1_000 })).map((e) => e.seq);
    const toldSeqs = told.flatMap((t) => t.seqs);
    expect(toldSeqs).toEqual(stored);
    expect(told.every((t) => t.inbox === bob)).toBe(true);
    await owner.close();
    await engine.close();
  });

  it('a throwing listener fails no append and is logged', async () => {
    const { engine, owner, logger } = await ownerWith('throws', () => {
      throw new Error('listener boom');
    });
    const bob = inbox('bob');
    const [one] = await owner.append({ inbox: bob, entries: [msg('alice', 'a')] });
    const many = await owner.append({ inbox: bob, entries: [msg('alice', 'b'), msg('alice', 'c')] });
    expect(one?.duplicate).toBe(false);
    expect(many.map((o) => o.duplicate)).toEqual([false, false]);
    expect(await engine.timeline.readAfter({ inbox: bob, afterSeq: 0, limit: 10 })).toHaveLength(3);
    expect(logger.records.some((l) => l.msg === 'append listener threw')).toBe(true);
    await owner.close();
    await engine.close();
  });
});
