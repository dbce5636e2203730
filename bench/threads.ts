/**
 * `npm run bench -- threads`: the embedded server's max rate — the highest offered 1:1 rate whose
 * delivery p99 stays under the peers bench's limit (bench/peers/rates.ts, same ladder and
 * options, BENCH_PEERS_*) — with SEQLINE_THREADS=1 and =2 in the same run, one after the other,
 * and their ratio. Target: 2 threads >= 1.6x 1 thread on 2 cores. The load generator (this
 * process) runs on the same machine: on 2 cores it takes CPU the threads would use.
 */
import { availableParallelism } from 'node:os';
import { peersOptions } from './peers/options.ts';
import { runRates, type RatesResult } from './peers/rates.ts';
import { startSeqlineEmbedded } from './peers/seqline.ts';
import type { BenchResult } from './stats.ts';

const TARGET_RATIO = 1.6;
const progress = (line: string) => process.stderr.write(`threads: ${line}\n`);

export async function runThreadsBench(): Promise<BenchResult> {
  const o = { ...peersOptions(), steps: ['rates' as const] };
  const runs = new Map<number, RatesResult>();
  for (const threads of [1, 2]) {
    const system = await startSeqlineEmbedded({ SEQLINE_THREADS: String(threads) });
    try {
      runs.set(threads, await runRates(system, o, `threads-${threads}`, (line) => progress(`${threads} thread(s): ${line}`)));
    } finally {
      await system.stop();
    }
  }
  const [one, two] = [runs.get(1)!, runs.get(2)!];
  const ratio = one.highestOk && two.highestOk ? two.highestOk / one.highestOk : undefined;
  const rate = (r: RatesResult) =>
    r.highestOk === undefined
      ? `none held (from ${o.ladder[0]})`
      : `${r.highestOk} msg/s${r.firstFailed ? ` (${r.firstFailed} did not hold)` : ''}`;
  const p99 = (r: RatesResult) => {
    const held = r.highestOk === undefined ? undefined : r.byRate.get(r.highestOk);
    if (!held) return 'no rate held';
    const cores = (cpu: number) => (cpu / held.load.seconds).toFixed(2);
    const { load } = held;
    return `at ${held.rate} msg/s: delivery p99 ${held.delivery.p99.toFixed(1)} ms; CPU (cores): server ${cores(load.processes)}, load generator ${cores(load.loadgen)}, other processes ${cores(load.others)}`;
  };
  return {
    figures: [
      {
        name: 'embedded max rate, 2 threads / 1 thread',
        value: ratio === undefined ? 'n/a' : `${ratio.toFixed(2)}x`,
        target: `>= ${TARGET_RATIO}x on 2 cores`,
        met: ratio === undefined ? undefined : ratio >= TARGET_RATIO,
      },
      { name: 'embedded max rate, 1 thread', value: rate(one), target: 'report', met: undefined },
      { name: 'embedded max rate, 2 threads', value: rate(two), target: 'report', met: undefined },
    ],
    notes: [
      `${o.pairs} pairs, ladder ${o.ladder.join(', ')} msg/s (+${o.refine} bisection), p99 limit ${o.p99LimitMs} ms, ` +
        `${o.warmupMs / 1000} s warm-up, ${o.measureMs / 1000} s measured per rate; ${availableParallelism()} cores, load generator on the same machine`,
      `1 thread: ${p99(one)}`,
      `2 threads: ${p99(two)}`,
    ],
  };
}
