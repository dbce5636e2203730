/** The InboxOwner on the real embedded LMDB engine: durability, restarts and fencing on disk. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FencedError } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import type { EmbeddedEngine } from '@seqline/store';
import { InboxOwner } from '../src/index.ts';
import { MemoryLogger, RecordingPushBus } from './fakes.ts';
import { inbox, msg } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-seq-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function ownerOn(engine: EmbeddedEngine, push = new RecordingPushBus(), step = 50): Promise<InboxOwner> {
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  return new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger: new MemoryLogger(), epoch, step });
}

describe('InboxOwner on the embedded LMDB engine', () => {
  it('concurrent appends, dedup and receipts', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'basic') });
    const push = new RecordingPushBus();
    const o = await ownerOn(engine, push);
    const users = ['a', 'b', 'c', 'd'].map(inbox);
    const resend = msg('x', 'resend');
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) => o.append({ inbox: users[i % 4]!, entries: [i === 5 || i === 9 ? resend : msg('x', `m${i}`)] })),
    );
    for (const u of users) {
      const stored = await engine.timeline.readAfter({ inbox: u, afterSeq: 0, limit: 1000 });
      const seqs = stored.map((e) => e.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((x, y) => x - y));
      expect(await o.headSeq(u)).toBe(seqs.at(-1));
      let prev = 0;
      for (const p of push.forInbox(u)) {
        expect(p.prevSeq).toBe(prev);
        prev = p.entries.at(-1)!.seq;
      }
    }
    expect(results[5]).toEqual([{ seq: results[9]![0]!.seq, duplicate: false }]);
    expect(results[9]![0]!.duplicate).toBe(true);

    const target = msg('a', 'read me');
    const [stored] = await o.append({ inbox: users[0]!, entries: [target] });
    const readers = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    await Promise.all(readers.map((r) => o.addReceipt({ inbox: users[0]!, appinfo: target.appinfo, readers: [r] })));
    expect(await engine.timeline.getReaders({ inbox: users[0]!, seq: stored!.seq })).toEqual(readers);
    const receipts = (await engine.timeline.readAfter({ inbox: users[0]!, afterSeq: stored!.seq, limit: 100 })).filter(
      (e) => e.kind === 'receipt',
    );
    expect(receipts.at(-1)?.readBy).toEqual(readers);
    await o.close();
    await engine.close();
  });

  it('after a restart on the same directory, every new seq is above every old one', async () => {
    const dir = join(root, 'restart');
    const users = ['a', 'b', 'c'].map(inbox);
    let engine = await openEmbeddedEngine({ dir });
    const first = await ownerOn(engine);
    const handed = (
      await Promise.all(Array.from({ length: 120 }, (_, i) => first.append({ inbox: users[i % 3]!, entries: [msg('x', `m${i}`)] })))
    )
      .flat()
      .map((o) => o.seq);
    await first.close();
    await engine.close();

    engine = await openEmbeddedEngine({ dir });
    const second = await ownerOn(engine);
    for (const u of users) {
      const [out] = await second.append({ inbox: u, entries: [msg('x', 'after restart')] });
      expect(out!.seq).toBeGreaterThan(Math.max(...handed));
    }
    await second.close();
    await engine.close();
  });

  it('a deposed owner is fenced by the on-disk epoch', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'fence') });
    const a = inbox('alice');
    const old = await ownerOn(engine, new RecordingPushBus(), 5);
    await old.append({ inbox: a, entries: [msg('x', 'first')] });
    const fresh = await ownerOn(engine, new RecordingPushBus(), 5);
    await fresh.start();
    const errors: unknown[] = [];
    for (let i = 0; i < 10; i++) await old.append({ inbox: a, entries: [msg('x', `late${i}`)] }).catch((e: unknown) => errors.push(e));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e instanceof FencedError)).toBe(true);
    const oldMax = await engine.timeline.headSeq(a);
    const [out] = await fresh.append({ inbox: a, entries: [msg('x', 'new owner')] });
    expect(out!.seq).toBeGreaterThan(oldMax);
    await old.close();
    await fresh.close();
    await engine.close();
  });
});
