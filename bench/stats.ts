/** Percentiles, number formatting and the result table shared by every bench. */

/** One reported figure. `met` is undefined when no target applies. */
export interface Figure {
  name: string;
  value: string;
  target: string;
  met: boolean | undefined;
  /** The raw limit measured in the same run (what the hardware/library does without us). */
  raw?: string;
  /** Our figure relative to the raw limit, e.g. "0.42× raw". */
  ratio?: string;
}

export interface BenchResult {
  figures: Figure[];
  /** Detail lines printed under the bench (method, secondary figures, caveats). */
  notes: string[];
}

/** Latency samples in ms; preallocated so recording is cheap and bounded. */
export class Samples {
  private readonly values: Float64Array;
  private count = 0;
  dropped = 0;

  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
  }

  add(ms: number): void {
    if (this.count < this.values.length) this.values[this.count++] = ms;
    else this.dropped++;
  }

  get size(): number {
    return this.count;
  }

  summary(): LatencySummary {
    const sorted = this.values.slice(0, this.count).sort();
    return {
      n: this.count,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      p999: percentile(sorted, 99.9),
      max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN,
      mean: sorted.length > 0 ? sorted.reduce((a, b) => a + b, 0) / sorted.length : Number.NaN,
    };
  }
}

export interface LatencySummary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

export function fmtRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return 'n/a';
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)} M/s`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)} k/s`;
  return `${perSecond.toFixed(0)} /s`;
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  const abs = Math.abs(bytes);
  if (abs >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (abs >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes.toFixed(0)} B`;
}

export function fmtLatency(s: LatencySummary): string {
  return `p50 ${fmtMs(s.p50)}, p90 ${fmtMs(s.p90)}, p99 ${fmtMs(s.p99)}, p99.9 ${fmtMs(s.p999)}, max ${fmtMs(s.max)} (n=${s.n})`;
}

/** "0.42× raw": how much of the raw limit we reach (throughput) or cost (latency, memory). */
export function fmtRatio(ours: number, raw: number): string {
  if (!Number.isFinite(ours) || !Number.isFinite(raw) || raw === 0) return 'n/a';
  return `${(ours / raw).toFixed(2)}× raw`;
}

export function statusOf(met: boolean | undefined): string {
  if (met === undefined) return 'info';
  return met ? 'met' : 'MISSED';
}

/** Plain-text table with padded columns (also pastes into Markdown after the header row). */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function figureRows(figures: Figure[]): string[][] {
  return figures.map((f) => [f.name, f.value, f.target, f.raw ?? '—', f.ratio ?? '—', statusOf(f.met)]);
}

export const FIGURE_HEADER = ['figure', 'measured', 'target', 'raw limit (same run)', 'ratio', 'status'];
