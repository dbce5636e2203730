import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rebuildWriteTimestamps, seqWriteTimestamp } from '../src/index.ts';

/**
 * A model of one inbox's index partition under last-write-wins: cells keep the write with the
 * higher timestamp (a tombstone wins a tie), a partition delete hides every cell at or below it.
 * Appends, rebuilds (finished or cut off), late writes of a deposed owner and expiry in any order:
 * what a reader sees is always the newest write in the writer's order, never a late one.
 */
class LwwPartition {
  private readonly cells = new Map<string, { at: bigint; value: string | null }>();
  private deletedAt = -1n;

  write(cell: string, value: string | null, at: bigint): void {
    const held = this.cells.get(cell);
    if (held === undefined || at > held.at || (at === held.at && value === null)) this.cells.set(cell, { at, value });
  }

  deleteAll(at: bigint): void {
    if (at > this.deletedAt) this.deletedAt = at;
  }

  read(cell: string): { value: string; at: bigint } | undefined {
    const held = this.cells.get(cell);
    return held === undefined || held.value === null || held.at <= this.deletedAt ? undefined : { value: held.value, at: held.at };
  }
}

type ModelOp =
  { kind: 'append'; gap: number } | { kind: 'rebuild' | 'cut-clear' | 'cut-rows' } | { kind: 'late'; back: number } | { kind: 'expire' };
const modelOpArb: fc.Arbitrary<ModelOp> = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), gap: fc.integer({ min: 1, max: 20_000 }) }),
  fc.record({ kind: fc.constantFrom('rebuild' as const, 'cut-clear' as const, 'cut-rows' as const) }),
  fc.record({ kind: fc.constant('late' as const), back: fc.nat({ max: 5 }) }),
  fc.record({ kind: fc.constant('expire' as const) }),
);

describe('index writes under last-write-wins (a model of the CQL partition)', () => {
  it('readers see the newest write in the writer order: rebuilds hide older writes, later appends are never hidden', () => {
    fc.assert(
      fc.property(fc.array(modelOpArb, { maxLength: 60 }), (ops) => {
        const rows = new LwwPartition(); // the six row tables, cleared by a rebuild
        const mark = new LwwPartition(); // conv_watermark: never cleared
        const appended: number[] = [];
        let head = 0;
        let expired = false;
        let expected: string | undefined;
        let expectedMark = '0';
        let rebuilds = 0;
        const rebuild = (kind: 'rebuild' | 'cut-clear' | 'cut-rows'): void => {
          const seq = mark.read('seq');
          const sentinel = mark.read('rebuilding');
          const stamps = rebuildWriteTimestamps({
            headSeq: expired ? 0 : head,
            stored: {
              seq: seq === undefined ? 0 : Number(seq.value),
              rebuilding: sentinel?.value === 'true',
              seqWrittenAt: seq?.at,
              sentinelWrittenAt: sentinel?.at,
            },
          });
          rebuilds++;
          rows.deleteAll(stamps.clear);
          mark.write('rebuilding', 'true', stamps.clear);
          if (kind === 'cut-clear') return;
          rows.write('rec', `rebuild#${rebuilds}`, stamps.rows);
          if (kind === 'cut-rows') return;
          mark.write('seq', String(expired ? 0 : head), stamps.finish);
          mark.write('rebuilding', 'false', stamps.finish);
          expected = `rebuild#${rebuilds}`;
          expectedMark = String(expired ? 0 : head);
        };
        for (const op of ops) {
          if (op.kind === 'append') {
            // The writer's catch-up redoes a cut-off rebuild before it indexes anything.
            if (mark.read('rebuilding')?.value === 'true') rebuild('rebuild');
            head += op.gap;
            expired = false;
            appended.push(head);
            rows.write('rec', `at ${head}`, seqWriteTimestamp(head));
            mark.write('seq', String(head), seqWriteTimestamp(head));
            expected = `at ${head}`;
            expectedMark = String(head);
          } else if (op.kind === 'late') {
            // A deposed owner's write of an earlier run lands now; it wrote the state at its seq.
            const seq = appended.at(-1 - op.back);
            if (seq === undefined) continue;
            rows.write('rec', `at ${seq}`, seqWriteTimestamp(seq));
            mark.write('seq', String(seq), seqWriteTimestamp(seq));
          } else if (op.kind === 'expire') {
            expired = true;
          } else {
            rebuild(op.kind);
          }
          if (mark.read('rebuilding')?.value === 'true') continue; // readers are told headSeq 0 meanwhile
          expect(rows.read('rec')?.value).toBe(expected);
          expect(mark.read('seq')?.value ?? '0').toBe(expectedMark);
        }
      }),
      { numRuns: 500 },
    );
  });
});
