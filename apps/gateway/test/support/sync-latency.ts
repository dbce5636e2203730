/**
 * A victim's sync latency with and without a flood, for flood tests: windows without and with
 * the flood alternate in one run (the flood process is paused in between), so the machine's own
 * drift (other test files on the same 2 cores) falls on both sides alike.
 */
import { performance } from 'node:perf_hooks';
import { FloodProcess, type FloodOptions, type FloodSummary } from './bad-frame-flood.ts';

export interface LatencySample {
  n: number;
  p50: number;
  p99: number;
  max: number;
  /** Calls that did not answer ok (a victim must never be refused). */
  failures: number;
}

export interface FloodComparison {
  unloaded: LatencySample;
  flooded: LatencySample;
  /** flooded p99 / unloaded p99, over every window. */
  ratio: number;
  /** The same ratio per unloaded/flooded window pair, in order. */
  windowRatios: number[];
  /**
   * The median of windowRatios: what the tests bound. One pause of the shared machine lands in
   * one window and moves the overall p99 (seen: 2.26 with p50 unchanged, 4.6 ms both sides); a
   * flood charged to the victim slows every flooded window (38x before the fix).
   */
  medianWindowRatio: number;
  flood: FloodSummary;
}

interface Samples {
  ms: number[];
  failures: number;
}

/** Calls `sync` one at a time for `durationMs`, `pauseMs` apart (under the 200/s default rate). */
async function sampleWindow(sync: () => Promise<boolean>, durationMs: number, pauseMs = 6): Promise<Samples> {
  const into: Samples = { ms: [], failures: 0 };
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const t0 = performance.now();
    const ok = await sync();
    into.ms.push(performance.now() - t0);
    if (!ok) into.failures++;
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  return into;
}

function merged(windows: Samples[]): Samples {
  return { ms: windows.flatMap((w) => w.ms), failures: windows.reduce((n, w) => n + w.failures, 0) };
}

function summarize(s: Samples): LatencySample {
  const sorted = [...s.ms].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
  return { n: sorted.length, p50: at(50), p99: at(99), max: sorted.at(-1) ?? NaN, failures: s.failures };
}

export interface CompareOptions {
  /** Unloaded + flooded window pairs (default 8: a p99 of ~1 200 calls a side, steadier on 2 shared cores). */
  rounds?: number;
  /** Length of each window (default 1 100 ms). */
  windowMs?: number;
  /** The flood's start-up (tsx, first connects) before the first window (default 1 500 ms). */
  warmupMs?: number;
}

/** Alternates unloaded and flooded windows of `sync` calls; about rounds × 2 × windowMs long. */
export async function compareUnderFlood(
  sync: () => Promise<boolean>,
  flood: Omit<FloodOptions, 'durationMs'>,
  options: CompareOptions = {},
): Promise<FloodComparison> {
  const rounds = options.rounds ?? 8;
  const windowMs = options.windowMs ?? 1100;
  const warmupMs = options.warmupMs ?? 1500;
  const calm: Samples[] = [];
  const busy: Samples[] = [];
  await sampleWindow(sync, 300); // warm up the victim's path
  const attacker = new FloodProcess({ ...flood, durationMs: warmupMs + rounds * 2 * windowMs + 5000 });
  try {
    await new Promise((r) => setTimeout(r, warmupMs));
    for (let round = 0; round < rounds; round++) {
      attacker.pause();
      await new Promise((r) => setTimeout(r, 50)); // what it had sent is read and answered
      calm.push(await sampleWindow(sync, windowMs));
      attacker.resume();
      busy.push(await sampleWindow(sync, windowMs));
    }
  } catch (err) {
    await attacker.stop().catch(() => undefined);
    throw err;
  }
  const summary = await attacker.stop();
  const u = summarize(merged(calm));
  const f = summarize(merged(busy));
  const windowRatios = calm.map((c, i) => summarize(busy[i]!).p99 / summarize(c).p99);
  const sorted = [...windowRatios].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const medianWindowRatio = sorted.length % 2 === 1 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { unloaded: u, flooded: f, ratio: f.p99 / u.p99, windowRatios, medianWindowRatio, flood: summary };
}

export function describeLatency(s: LatencySample): string {
  return `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, max ${s.max.toFixed(1)} ms (n=${s.n}, failures ${s.failures})`;
}
