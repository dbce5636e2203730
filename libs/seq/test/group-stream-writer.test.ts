/** GroupStreamWriter on the real embedded LMDB engine: gseq allocation, merging, dedup, restarts. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { groupKey, type NewEntry } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { GroupStreamWriter, sectionOfGroupShard } from '../src/index.ts';
import { MemoryLogger } from './fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-gsw-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
const msg = (text: string, appinfo = `g-${++n}-${text}`): NewEntry => ({
  kind: 'msg', appinfo, conv: { type: 'group', id: 'g' }, from: 'alice', sendTime: 1_700_000_000_000, type: 'text', body: { text },
});

async function writerOn(engine: EmbeddedEngine, step = 50): Promise<GroupStreamWriter> {
  const epoch = await engine.ceilings.nextEpoch('group-writer');
  return new GroupStreamWriter({ streams: engine.groupStreams, ceilings: engine.ceilings, logger: new MemoryLogger(), epoch, step, shardCount: 4 });
}

describe('GroupStreamWriter', () => {
  it('allocates strictly increasing gseqs under concurrency, each prevSeq naming the gseq before it', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'basic') });
    const w = await writerOn(engine);
    const groups = ['g1', 'g2', 'g3'].map((g) => groupKey('t', g));
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => w.append(groups[i % 3]!, [msg(`m${i}`)])));
    expect(results.every((r) => r.length === 1 && r[0]!.duplicate === false)).toBe(true);
    for (const g of groups) {
      const stored = await engine.groupStreams.readAfter(g, 0, 1000);
      expect(stored).toHaveLength(100);
      const gseqs = stored.map((e) => e.seq);
      expect(gseqs).toEqual([...gseqs].sort((a, b) => a - b));
      expect(new Set(gseqs).size).toBe(100);
      // prevSeq chains every stored entry to the one before it: a push built from them has no hole.
      const prevBySeq = new Map(results.flat().map((o) => [o.seq, o.prevSeq]));
      const forThisGroup = gseqs.map((s) => prevBySeq.get(s));
      expect(forThisGroup).toEqual([0, ...gseqs.slice(0, -1)]);
      expect(await w.headSeq(g)).toBe(gseqs.at(-1));
    }
    await w.close();
    await engine.close();
  });

  it('merges a burst for one group into few store appends and keeps call order', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'merge') });
    const w = await writerOn(engine);
    const g = groupKey('t', 'burst');
    let appendCalls = 0;
    const real = engine.groupStreams.append.bind(engine.groupStreams);
    engine.groupStreams.append = async (key, entries) => { appendCalls++; return real(key, entries); };
    const burst = Array.from({ length: 50 }, (_, i) => msg(`b${i}`));
    const out = await Promise.all(burst.map((e) => w.append(g, [e])));
    expect(appendCalls).toBeLessThanOrEqual(2);
    const gseqs = out.map((o) => o[0]!.seq);
    expect(gseqs).toEqual([...gseqs].sort((a, b) => a - b)); // call order = gseq order
    await w.close();
    await engine.close();
  });

  it('dedups by appinfo: a resend (also in the same batch) returns the original gseq', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'dedup') });
    const w = await writerOn(engine);
    const g = groupKey('t', 'dup');
    const e = msg('once');
    const [first] = await w.append(g, [e]);
    const again = await Promise.all([w.append(g, [e]), w.append(g, [msg('other'), e, e])]);
    expect(again[0]).toEqual([{ seq: first!.seq, duplicate: true }]);
    expect(again[1]![1]).toEqual({ seq: first!.seq, duplicate: true });
    expect(again[1]![2]).toEqual({ seq: first!.seq, duplicate: true });
    expect(await engine.groupStreams.readAfter(g, 0, 10)).toHaveLength(2);
    await w.close();
    await engine.close();
  });

  it('after a restart (new epoch) gseqs jump forward past the persisted ceiling, never back', async () => {
    const dir = join(root, 'restart');
    const g = groupKey('t', 'r');
    let engine = await openEmbeddedEngine({ dir });
    let w = await writerOn(engine, 20);
    const before = await w.append(g, [msg('a'), msg('b'), msg('c')]);
    await w.close();
    await engine.close();
    engine = await openEmbeddedEngine({ dir });
    w = await writerOn(engine, 20);
    const [after] = await w.append(g, [msg('d')]);
    expect(after!.seq).toBeGreaterThan(before.at(-1)!.seq);
    expect(after!.prevSeq).toBe(before.at(-1)!.seq);
    // A section per group shard, separate from inbox sections.
    expect(sectionOfGroupShard(3)).toBe('group-shard-3');
    await w.close();
    await engine.close();
  });

  it('headSeq waits for appends queued before it', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'barrier') });
    const w = await writerOn(engine);
    const g = groupKey('t', 'b');
    const appends = Array.from({ length: 20 }, (_, i) => w.append(g, [msg(`x${i}`)]));
    const head = await w.headSeq(g);
    const outcomes = await Promise.all(appends);
    expect(head).toBe(Math.max(...outcomes.map((o) => o[0]!.seq)));
    await w.close();
    await engine.close();
  });
});
