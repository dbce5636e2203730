/**
 * GroupStreamWriter on the real embedded LMDB engine, what is particular to it: a burst of
 * appends to a group is merged into few store round trips. What every GroupStreamAppender
 * promises (rising gseqs, prevSeq chains, dedup, headSeq, restarts) is the contract suite's:
 * group-stream-appender.contract.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { groupKey, type NewEntry } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { GroupStreamWriter } from '../src/index.ts';
import { MemoryLogger } from './fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-gsw-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
const msg = (text: string, appinfo = `g-${++n}-${text}`): NewEntry => ({
  kind: 'msg',
  appinfo,
  conv: { type: 'group', id: 'g' },
  from: 'alice',
  sendTime: 1_700_000_000_000,
  type: 'text',
  body: { text },
});

async function writerOn(engine: EmbeddedEngine, step = 50): Promise<GroupStreamWriter> {
  const epoch = await engine.ceilings.nextEpoch('group-writer');
  return new GroupStreamWriter({
    streams: engine.groupStreams,
    ceilings: engine.ceilings,
    logger: new MemoryLogger(),
    epoch,
    step,
    shardCount: 4,
  });
}

describe('GroupStreamWriter', () => {
  it('merges a burst for one group into few store appends and keeps call order', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'merge') });
    const w = await writerOn(engine);
    const g = groupKey('t', 'burst');
    let appendCalls = 0;
    const real = engine.groupStreams.append.bind(engine.groupStreams);
    engine.groupStreams.append = async (input) => {
      appendCalls++;
      return real(input);
    };
    const burst = Array.from({ length: 50 }, (_, i) => msg(`b${i}`));
    const out = await Promise.all(burst.map((e) => w.append({ group: g, entries: [e] })));
    expect(appendCalls).toBeLessThanOrEqual(2);
    const gseqs = out.map((o) => o[0]!.seq);
    expect(gseqs).toEqual([...gseqs].sort((a, b) => a - b)); // call order = gseq order
    await w.close();
    await engine.close();
  });
});
