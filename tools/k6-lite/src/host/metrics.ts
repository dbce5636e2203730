/**
 * The host's metric sinks: every point of every VU, aggregated per metric (and per submetric a
 * threshold names, `metric{tag:value}`), k6's thresholds evaluated on them, the end-of-test
 * summary, and the points written as k6's `--out json` lines.
 */
import type { Contains, MetricType, Point, Tags } from '../protocol.ts';

class Sink {
  count = 0;
  sum = 0;
  nonZero = 0;
  min = Infinity;
  max = -Infinity;
  last = 0;
  private values: number[] = [];
  private sorted = true;

  constructor(
    readonly type: MetricType,
    readonly contains: Contains,
  ) {}

  add(value: number): void {
    this.count += 1;
    this.sum += value;
    if (value !== 0) this.nonZero += 1;
    this.min = Math.min(this.min, value);
    this.max = Math.max(this.max, value);
    this.last = value;
    if (this.type === 'trend') {
      this.values.push(value);
      this.sorted = false;
    }
  }

  /** k6's percentile: linear interpolation between the closest ranks. */
  percentile(p: number): number {
    if (this.values.length === 0) return 0;
    if (!this.sorted) {
      this.values.sort((a, b) => a - b);
      this.sorted = true;
    }
    const i = (p / 100) * (this.values.length - 1);
    const lo = this.values[Math.floor(i)]!;
    const hi = this.values[Math.ceil(i)]!;
    return lo + (hi - lo) * (i - Math.floor(i));
  }

  /** An aggregation a threshold names: count, rate, value, avg, min, max, med, p(N). */
  aggregate(name: string, seconds: number): number | undefined {
    const p = /^p\(\s*(\d+(?:\.\d+)?)\s*\)$/.exec(name);
    if (p && this.type === 'trend') return this.percentile(Number(p[1]));
    switch (`${this.type}:${name}`) {
      case 'counter:count':
        return this.sum;
      case 'counter:rate':
        return seconds > 0 ? this.sum / seconds : 0;
      case 'gauge:value':
        return this.last;
      case 'gauge:min':
        return this.count ? this.min : 0;
      case 'gauge:max':
        return this.count ? this.max : 0;
      case 'rate:rate':
        return this.count ? this.nonZero / this.count : 0;
      case 'trend:avg':
        return this.count ? this.sum / this.count : 0;
      case 'trend:min':
        return this.count ? this.min : 0;
      case 'trend:max':
        return this.count ? this.max : 0;
      case 'trend:med':
        return this.percentile(50);
      case 'trend:count':
        return this.count;
      default:
        return undefined;
    }
  }
}

interface Submetric {
  metric: string;
  tags: Tags;
  sink: Sink | undefined;
}
export interface ThresholdResult {
  key: string;
  expression: string;
  ok: boolean;
  observed: number | undefined;
}

const EXPRESSION = /^\s*([a-z]+|p\(\s*\d+(?:\.\d+)?\s*\))\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/;

function parseKey(key: string): { metric: string; tags: Tags } {
  const m = /^([^{]+)(?:\{(.*)\})?$/.exec(key);
  if (!m) throw new Error(`threshold "${key}": not metric or metric{tag:value}`);
  const tags: Tags = {};
  for (const pair of (m[2] ?? '').split(',').filter((s) => s.trim())) {
    const [k, ...v] = pair.split(':');
    tags[(k ?? '').trim()] = v
      .join(':')
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return { metric: (m[1] ?? '').trim(), tags };
}

function compare(observed: number, op: string, limit: number): boolean {
  switch (op) {
    case '<':
      return observed < limit;
    case '<=':
      return observed <= limit;
    case '>':
      return observed > limit;
    case '>=':
      return observed >= limit;
    case '!=':
      return observed !== limit;
    default:
      return observed === limit;
  }
}

export class MetricStore {
  private readonly sinks = new Map<string, Sink>();
  private readonly submetrics = new Map<string, Submetric>();
  /** Metrics declared with two types (k6 refuses such a script); their conflicting points are dropped. */
  readonly conflicts: string[] = [];

  /** `thresholds`: script option; their submetrics get sinks of their own. */
  constructor(
    private readonly thresholds: Record<string, string[]>,
    private readonly write: ((line: string) => void) | null,
  ) {
    for (const [key, expressions] of Object.entries(thresholds)) {
      for (const e of expressions) if (!EXPRESSION.test(e)) throw new Error(`threshold ${key}: "${e}" is not <aggregation> <op> <number>`);
      const parsed = parseKey(key);
      if (Object.keys(parsed.tags).length > 0) this.submetrics.set(key, { ...parsed, sink: undefined });
    }
  }

  add(p: Point): void {
    let sink = this.sinks.get(p.metric);
    if (!sink) {
      sink = new Sink(p.type, p.contains);
      this.sinks.set(p.metric, sink);
      this.write?.(
        JSON.stringify({
          type: 'Metric',
          data: { name: p.metric, type: p.type, contains: p.contains, thresholds: this.thresholds[p.metric] ?? [], submetrics: null },
          metric: p.metric,
        }),
      );
    } else if (sink.type !== p.type) {
      const conflict = `metric ${p.metric}: declared as ${sink.type} and as ${p.type}`;
      if (!this.conflicts.includes(conflict)) this.conflicts.push(conflict);
      return;
    }
    sink.add(p.value);
    for (const sub of this.submetrics.values()) {
      if (sub.metric !== p.metric || !Object.entries(sub.tags).every(([k, v]) => p.tags[k] === v)) continue;
      sub.sink ??= new Sink(p.type, p.contains);
      sub.sink.add(p.value);
    }
    this.write?.(
      JSON.stringify({ type: 'Point', data: { time: new Date(p.time).toISOString(), value: p.value, tags: p.tags }, metric: p.metric }),
    );
  }

  evaluate(seconds: number): ThresholdResult[] {
    const results: ThresholdResult[] = [];
    for (const [key, expressions] of Object.entries(this.thresholds)) {
      const sink = this.submetrics.has(key) ? this.submetrics.get(key)?.sink : this.sinks.get(key);
      for (const expression of expressions) {
        const [, aggregation = '', op = '', limit = '0'] = EXPRESSION.exec(expression) ?? [];
        // A metric with no points at all passes, as in k6 (nothing measured to exceed a limit).
        const observed = sink ? sink.aggregate(aggregation.replace(/\s/g, ''), seconds) : undefined;
        if (sink && observed === undefined) throw new Error(`threshold ${key}: "${aggregation}" does not apply to a ${sink.type}`);
        results.push({ key, expression, observed, ok: observed === undefined || compare(observed, op, Number(limit)) });
      }
    }
    return results;
  }

  summary(seconds: number): string[] {
    const fmt = (v: number, time: boolean) => (time ? `${v.toFixed(2)}ms` : Number.isInteger(v) ? String(v) : v.toFixed(4));
    return [...this.sinks.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, s]) => {
        const time = s.contains === 'time';
        const what =
          s.type === 'counter'
            ? `${fmt(s.sum, time)} ${(s.sum / Math.max(seconds, 1e-9)).toFixed(2)}/s`
            : s.type === 'rate'
              ? `${((s.nonZero / Math.max(s.count, 1)) * 100).toFixed(2)}% ${s.nonZero} out of ${s.count}`
              : s.type === 'gauge'
                ? `${fmt(s.last, time)} min=${fmt(s.min, time)} max=${fmt(s.max, time)}`
                : ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)']
                    .map((a) => `${a}=${fmt(s.aggregate(a, seconds) ?? 0, time)}`)
                    .join(' ') + ` count=${s.count}`;
        return `  ${name.padEnd(32, '.')}: ${what}`;
      });
  }
}
