import { describe, expect, it } from 'vitest';
import { dedupKeyOf, type NewEntry } from '@seqline/core';
import { takeRun } from '../src/inbox-queue.ts';
import type { InboxOp } from '../src/inbox-queue.ts';
import { dedupAgainst, resolveInBatchDuplicates } from '../src/dedup.ts';
import { msg } from './harness.ts';

const noop = (): void => {};
const append = (n: number): InboxOp => ({
  kind: 'append',
  entries: Array.from({ length: n }, (_, i) => msg('x', `e${i}`)),
  resolve: noop,
  reject: noop,
});
const receipt = (appinfo: string): InboxOp => ({ kind: 'receipt', appinfo, readers: ['r'], resolve: noop, reject: noop });

describe('takeRun', () => {
  it('takes only the same-kind prefix, so merging never reorders', () => {
    const q = [append(1), append(2), receipt('a'), append(1), receipt('a')];
    expect(takeRun(q, { maxEntries: 100, maxOps: 100 }).map((o) => o.kind)).toEqual(['append', 'append']);
    expect(takeRun(q, { maxEntries: 100, maxOps: 100 }).map((o) => o.kind)).toEqual(['receipt']);
    expect(q.map((o) => o.kind)).toEqual(['append', 'receipt']);
  });

  it('respects the entry and op limits but always takes one op', () => {
    const q = [append(300), append(300), append(100)];
    expect(takeRun(q, { maxEntries: 200, maxOps: 10 })).toHaveLength(1); // oversized op alone
    expect(takeRun(q, { maxEntries: 500, maxOps: 10 })).toHaveLength(2);
    const r = [receipt('a'), receipt('b'), receipt('c')];
    expect(takeRun(r, { maxEntries: 500, maxOps: 2 })).toHaveLength(2);
  });
});

describe('dedup', () => {
  it('marks stored appinfos and in-batch repeats as duplicates of the first occurrence', () => {
    const a = msg('x', 'a');
    const b = msg('x', 'b');
    const entries: NewEntry[] = [a, b, a, b, msg('x', 'c')];
    const storedB = { seq: 7, duplicate: true };
    const { outcomes, fresh } = dedupAgainst(entries, entries.map(dedupKeyOf), new Map([[dedupKeyOf(b), 7]]));
    expect(fresh.map((f) => f.index)).toEqual([0, 4]);
    outcomes[0] = { seq: 10, duplicate: false };
    outcomes[4] = { seq: 11, duplicate: false };
    // A repeat of a new entry is answered with that entry as stored (a stored one known by seq only, without).
    expect(resolveInBatchDuplicates(outcomes, entries)).toEqual([
      { seq: 10, duplicate: false },
      storedB,
      { seq: 10, duplicate: true, original: { ...a, seq: 10 } },
      storedB,
      { seq: 11, duplicate: false },
    ]);
  });
});
