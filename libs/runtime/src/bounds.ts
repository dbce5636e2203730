/**
 * The memory bounds a process applies (every SEQLINE_MAX_* setting), reported to Prometheus:
 * `seqline_bound_limit{bound="SEQLINE_MAX_…"}` is the configured value and
 * `seqline_bound_fill{bound=…}` what is held against it now, so one alert rule
 * (fill / limit near 1) covers them all. A process lists its bounds as a `BoundReports` of its
 * config type, which names every SEQLINE_MAX_* key: a new bound without a report does not
 * compile (docs/architecture.md, "Bounds").
 */
import { Gauge, type Registry } from 'prom-client';

/** The SEQLINE_MAX_* settings of a config type. */
export type MaxBoundName<C> = Extract<keyof C, `SEQLINE_MAX_${string}`>;

export interface BoundReport {
  /** The configured bound. */
  limit: number;
  /** What is held against it now; absent where counting it would not be cheap. */
  fill?: () => number;
}

/** One report per SEQLINE_MAX_* setting of the config type `C`. */
export type BoundReports<C> = Record<MaxBoundName<C>, BoundReport>;

const PREFIX = 'SEQLINE_MAX_';

/** The SEQLINE_MAX_* keys of a zod object schema: what a process must report. */
export function maxBoundNames(schema: { shape: object }): string[] {
  return Object.keys(schema.shape).filter((key) => key.startsWith(PREFIX));
}

/** Registers the two gauges of `bounds` on `registry` (once per registry). */
export function registerBoundGauges(registry: Registry, bounds: Readonly<Record<string, BoundReport>>): void {
  const registers = [registry];
  new Gauge({
    name: 'seqline_bound_limit',
    help: 'A SEQLINE_MAX_* memory bound of this process, as configured',
    labelNames: ['bound'],
    registers,
    collect() {
      for (const [bound, report] of Object.entries(bounds)) this.set({ bound }, report.limit);
    },
  });
  new Gauge({
    name: 'seqline_bound_fill',
    help: 'What this process holds against each SEQLINE_MAX_* memory bound now',
    labelNames: ['bound'],
    registers,
    collect() {
      for (const [bound, report] of Object.entries(bounds)) if (report.fill) this.set({ bound }, report.fill());
    },
  });
}
