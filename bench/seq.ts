/**
 * Bench 2: seq allocations/s from memory (SectionAllocator.tryNextSync), against the raw limit
 * of the same work without the allocator: a JS Map get + set per key.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '@seqline/core';
import { SectionAllocator } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { fmtRate, fmtRatio, type BenchResult } from './stats.ts';
import { tempDir } from './support.ts';

const TARGET = 1_000_000;
const KEYS = 10_000;
const SLICE_MS = 400;
const ROUNDS = 4;
const CHUNK = 100_000;
/** Hard cap per slice so a loop is bounded whatever the clock does. */
const MAX_PER_SLICE = 200_000_000;

const keys = Array.from({ length: KEYS }, (_, i) => `default:user-${i}`);

/** Runs `chunk(n, offset)` in chunks until `ms` passed; returns operations per second. */
function timed(ms: number, chunk: (n: number, offset: number) => void): { ops: number; elapsedMs: number } {
  const start = performance.now();
  let ops = 0;
  while (ops < MAX_PER_SLICE && performance.now() - start < ms) {
    chunk(CHUNK, ops);
    ops += CHUNK;
  }
  return { ops, elapsedMs: performance.now() - start };
}

/** Sums slices of one kind: ops per second over the time they ran. */
class Tally {
  ops = 0;
  ms = 0;
  add(r: { ops: number; elapsedMs: number }): void {
    this.ops += r.ops;
    this.ms += r.elapsedMs;
  }
  get rate(): number {
    return this.ops / (this.ms / 1000);
  }
}

export async function runSeqBench(): Promise<BenchResult> {
  const tmp = await tempDir('seq');
  const engine = await openEmbeddedEngine({ dir: join(tmp.dir, 'db'), logger: silentLogger });
  const notes: string[] = [];
  try {
    const epoch = await engine.ceilings.nextEpoch('bench-seq');
    // Hot path: a step so large that no raise is needed inside the timed loop (the ceiling
    // raise is an LMDB write, measured separately below).
    const hot = new SectionAllocator({ section: 'bench-hot', ceilings: engine.ceilings, epoch, step: 4_000_000_000, logger: silentLogger });
    await hot.start();
    let checksum = 0;
    let misses = 0;
    const allocate = (n: number, offset: number) => {
      for (let i = 0; i < n; i++) {
        const seq = hot.tryNextSync(keys[(offset + i) % KEYS] as string);
        if (seq === undefined) misses++;
        else checksum += seq;
      }
    };
    // The raw limit: the same key walk and one number per key in a Map, nothing else.
    const plain = new Map<string, number>();
    const mapIncrement = (n: number, offset: number) => {
      for (let i = 0; i < n; i++) {
        const key = keys[(offset + i) % KEYS] as string;
        const next = (plain.get(key) ?? 0) + 1;
        plain.set(key, next);
        checksum += next;
      }
    };
    timed(200, allocate);
    timed(200, mapIncrement);
    const ours = new Tally();
    const raw = new Tally();
    for (let round = 0; round < ROUNDS; round++) {
      ours.add(timed(SLICE_MS, allocate));
      raw.add(timed(SLICE_MS, mapIncrement));
    }

    // Worst case, with the default step (10 000) on the real LMDB ceiling store: one hot key,
    // so every 10 000 seqs the durable ceiling must be raised (an fsync'd write). With many
    // keys the ceiling bounds each key's seq, so raises are rare (none in the loop above).
    const sustained = new SectionAllocator({ section: 'bench-sustained', ceilings: engine.ceilings, epoch, logger: silentLogger });
    await sustained.start();
    let waits = 0;
    const start = performance.now();
    let done = 0;
    while (done < 50_000_000 && performance.now() - start < 1000) {
      const key = 'default:hot-inbox';
      const seq = sustained.tryNextSync(key);
      if (seq === undefined) {
        waits++;
        checksum += (await sustained.next(key))[0] ?? 0;
      } else {
        checksum += seq;
      }
      done++;
    }
    const sustainedRate = done / ((performance.now() - start) / 1000);

    notes.push(
      `${KEYS} keys round-robin in one section, ${ROUNDS} interleaved rounds of ${SLICE_MS} ms; misses in the hot loop: ${misses}`,
    );
    notes.push(`raw: Map get + set of the same keys ${fmtRate(raw.rate)}`);
    notes.push(`one hot key, default step 10 000, LMDB ceiling raises: ${fmtRate(sustainedRate)} (${waits} waits for a raise)`);
    notes.push(`(checksum ${checksum % 1000}, keeps the loops from being optimised away)`);
    return {
      figures: [
        {
          name: 'seq allocations/s (tryNextSync, memory)',
          value: fmtRate(ours.rate),
          target: `≥ ${fmtRate(TARGET)}`,
          met: ours.rate >= TARGET,
          raw: `${fmtRate(raw.rate)} Map get+set`,
          ratio: fmtRatio(ours.rate, raw.rate),
        },
      ],
      notes,
    };
  } finally {
    await engine.close();
    await tmp.remove();
  }
}
