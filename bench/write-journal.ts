/**
 * Bench: what journaling a worker thread's write transactions costs (libs/store torn-writes.ts;
 * docs/decisions.md, "A thread's end cannot tear a write transaction"). Appends through the
 * embedded engine in a worker thread, 64 in flight over 1 000 inboxes, journaled against the
 * same without the journal (the raw layer), in alternating slices on fresh directories: appends/s
 * and the thread's busy time per append.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { fmtRate, median, type BenchResult } from './stats.ts';
import { tempDir } from './support.ts';

const ROUNDS = 3;
const SLICE_MS = 3000;
const WARMUP_MS = 1000;

interface Slice {
  ops: number;
  wallMs: number;
  busyMs: number;
}

function slice(dir: string, journalWrites: boolean): Promise<Slice> {
  const worker = new Worker(new URL('./write-journal-thread.mjs', import.meta.url), {
    workerData: { dir, journalWrites, ms: SLICE_MS, warmupMs: WARMUP_MS },
    execArgv: ['--conditions=source'],
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (result: Slice) => resolve(result));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`write-journal thread ended (code ${code}) before answering`)));
  });
}

export async function runWriteJournalBench(): Promise<BenchResult> {
  const tmp = await tempDir('write-journal');
  const rates = { journaled: [] as number[], raw: [] as number[] };
  const busy = { journaled: [] as number[], raw: [] as number[] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first: disk latency drifts within a minute.
      const order = round % 2 === 0 ? [true, false] : [false, true];
      for (const journaled of order) {
        const r = await slice(join(tmp.dir, `${round}-${journaled ? 'journaled' : 'raw'}`), journaled);
        const key = journaled ? 'journaled' : 'raw';
        rates[key].push(r.ops / (r.wallMs / 1000));
        busy[key].push((r.busyMs * 1000) / r.ops);
      }
    }
  } finally {
    await tmp.remove();
  }
  const ratios = rates.journaled.map((j, i) => j / rates.raw[i]!);
  const ratio = median(ratios);
  const busyRatio = median(busy.journaled.map((j, i) => j / busy.raw[i]!));
  return {
    figures: [
      {
        name: 'appends/s in a worker thread, journaled',
        value: `${fmtRate(median(rates.journaled))} (${ratio.toFixed(2)}× raw)`,
        // No target of its own: what counts is the whole message path, `BENCH_CPU_AGAINST` (docs/benchmarks.md).
        target: 'report',
        met: undefined,
        raw: `${fmtRate(median(rates.raw))} without the journal`,
      },
      {
        name: 'thread busy time per append, journaled',
        value: `${median(busy.journaled).toFixed(0)} µs (${busyRatio.toFixed(2)}× raw)`,
        target: 'report',
        met: undefined,
        raw: `${median(busy.raw).toFixed(0)} µs without the journal`,
      },
    ],
    notes: [
      `${ROUNDS} rounds of ${SLICE_MS / 1000} s slices (after ${WARMUP_MS / 1000} s warm-up), 64 appends in flight over 1 000 inboxes, conversation index on; ratio per round ${ratios.map((r) => r.toFixed(2)).join(', ')}`,
    ],
  };
}
