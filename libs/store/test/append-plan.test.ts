import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { msgEntry, msgKey } from '@seqline/testing';
import { bigintValue, textValue } from '../src/scylla/cql-values.ts';
import {
  MAX_SHARED_BATCH_BYTES,
  MAX_SHARED_BATCH_ROWS,
  entryGroups,
  packBatches,
  planAppend,
  statementBytes,
} from '../src/scylla/append-plan.ts';

const NONE = { found: new Map(), displaced: new Map() };

describe('planAppend', () => {
  it('dedups against the stored and within the call, with the originals, and checks seqs above the head', () => {
    const old = msgEntry(3, 'old', { body: { text: 'as stored' } });
    const known = { found: new Map([[msgKey('old'), old]]), displaced: new Map() };
    const plan = planAppend('s', [msgEntry(11, 'a'), msgEntry(12, 'old'), msgEntry(13, 'a'), msgEntry(14, 'b')], 10, known);
    expect(plan.outcomes).toEqual([
      { seq: 11, duplicate: false },
      { seq: 3, duplicate: true, original: old },
      { seq: 11, duplicate: true, original: msgEntry(11, 'a') },
      { seq: 14, duplicate: false },
    ]);
    expect(plan.toWrite.map((e) => e.seq)).toEqual([11, 14]);
    expect(plan.head).toBe(14);
    expect(plan.contiguous).toBe(false); // 12 and 13 were burnt
    expect(() => planAppend('s', [msgEntry(10, 'c')], 10, NONE)).toThrow(/not above head/);
  });

  it('dedups by sender: the same appinfo from two senders is two entries', () => {
    const alices = msgEntry(3, 'x', { from: 'alice' });
    const known = { found: new Map([[msgKey('x', 'alice'), alices]]), displaced: new Map() };
    const plan = planAppend(
      's',
      [msgEntry(11, 'x', { from: 'alice' }), msgEntry(12, 'x', { from: 'carol' }), msgEntry(13, 'x', { from: 'carol' })],
      10,
      known,
    );
    expect(plan.outcomes).toEqual([
      { seq: 3, duplicate: true, original: alices },
      { seq: 12, duplicate: false },
      { seq: 12, duplicate: true, original: msgEntry(12, 'x', { from: 'carol' }) },
    ]);
  });

  it("re-keys a previous-layout row first when a new entry's row would overwrite it (same bucket only)", () => {
    // carol's old message "alice/x" is indexed under its plain appinfo, which is alice's new key for "x".
    const displaced = { bucket: 0, seq: 2, key: msgKey('alice/x', 'carol') };
    const known = { found: new Map(), displaced: new Map([[msgKey('x', 'alice'), displaced]]) };
    expect(planAppend('s', [msgEntry(11, 'x', { from: 'alice' })], 10, known).rekeys).toEqual([displaced]);
    expect(planAppend('s', [msgEntry(70_000, 'x', { from: 'alice' })], 10, known).rekeys).toEqual([]);
  });

  it('contiguous appends need no leftover clearing; far buckets are named', () => {
    expect(planAppend('s', [msgEntry(1, 'a'), msgEntry(2, 'b')], 0, NONE)).toMatchObject({
      contiguous: true,
      farBuckets: [],
      buckets: [0],
    });
    const far = planAppend('s', [msgEntry(70_000, 'a'), msgEntry(140_000, 'b')], 5, NONE);
    expect(far).toMatchObject({ contiguous: false, buckets: [1, 2], farBuckets: [1, 2] });
  });
});

describe('packBatches', () => {
  it('never splits a group, keeps shared batches within the limits, and sends big groups alone', () => {
    const groupArb = fc.array(fc.record({ rows: fc.integer({ min: 1, max: 130 }), text: fc.integer({ min: 1, max: 900 }) }), {
      maxLength: 40,
    });
    fc.assert(
      fc.property(groupArb, (shapes) => {
        const groups = shapes.map((shape, owner) => ({
          owner,
          statements: Array.from({ length: shape.rows }, () => ({ query: 'q', params: [`${owner}`, 'x'.repeat(shape.text)] })),
        }));
        const batches = packBatches(groups);
        const seen = new Map<number, number>();
        for (const batch of batches) {
          for (const owner of batch.owners) seen.set(owner, (seen.get(owner) ?? 0) + 1);
          const bytes = batch.statements.reduce((sum, s) => sum + statementBytes(s), 0);
          if (batch.owners.length > 1) {
            expect(batch.statements.length).toBeLessThanOrEqual(MAX_SHARED_BATCH_ROWS);
            expect(bytes).toBeLessThanOrEqual(MAX_SHARED_BATCH_BYTES);
          }
          // Every statement of an owner in this batch: the whole group is here.
          for (const owner of batch.owners) {
            expect(batch.statements.filter((s) => s.params[0] === `${owner}`)).toHaveLength(groups[owner]?.statements.length ?? -1);
          }
        }
        for (const group of groups) expect(seen.get(group.owner)).toBe(1);
      }),
    );
  });

  it('entry groups pair each entry with its dedup row, per bucket and bounded, in seq order', () => {
    const entries = [...Array.from({ length: 75 }, (_, i) => msgEntry(i + 1, `a${i}`)), msgEntry(70_000, 'far')];
    const groups = entryGroups('s', entries, { insertEntry: 'ENTRY', insertAppinfo: 'APPINFO' });
    expect(groups.map((g) => g.statements.length)).toEqual([100, 50, 2]);
    for (const { statements: group } of groups) {
      // One partition key (stream, bucket) per group: one mutation.
      expect(new Set(group.map((s) => `${String(s.params[0])}/${String(s.params[1])}`)).size).toBe(1);
      expect(group.filter((s) => s.query === 'ENTRY')).toHaveLength(group.length / 2);
    }
    // The dedup row is keyed by sender and appinfo; the entry keeps the appinfo as sent.
    expect(groups[2]?.statements[1]?.params).toEqual([textValue('s'), bigintValue(1), textValue(msgKey('far')), bigintValue(70_000)]);
    for (const group of groups) expect(group.bytes).toBe(group.statements.reduce((sum, s) => sum + statementBytes(s), 0));
  });
});
