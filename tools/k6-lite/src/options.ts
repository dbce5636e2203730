/**
 * The part of k6's options k6-lite runs: vus, duration, iterations (k6's constant-vus and
 * shared-iterations executors), thresholds, setupTimeout, teardownTimeout. Options that would
 * change what runs and that k6-lite does not implement (scenarios, stages, ...) are refused, so a
 * run never silently differs from k6's.
 */
import { z } from 'zod';

export class OptionsError extends Error {
  override readonly name = 'OptionsError';
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A k6 duration ("30s", "1m30s", "250ms") or a number of milliseconds, in ms. */
export function parseDuration(value: string | number, what: string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new OptionsError(`${what}: ${value} is not a duration`);
    return value;
  }
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value.trim()) {
    throw new OptionsError(`${what}: "${value}" is not a duration (e.g. 30s, 1m30s, 250ms)`);
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * (UNITS[p[2] ?? 's'] ?? 0), 0);
}

const thresholdSpec = z.union([z.string(), z.object({ threshold: z.string(), abortOnFail: z.boolean().optional() })]);
const duration = z.union([z.string(), z.number()]);

/** Script `options` as far as k6-lite reads them; unknown keys pass (k6 has many that do not change what runs). */
const scriptOptions = z
  .object({
    vus: z.number().int().min(1).optional(),
    duration: duration.optional(),
    iterations: z.number().int().min(1).optional(),
    thresholds: z.record(z.string(), z.array(thresholdSpec)).optional(),
    setupTimeout: duration.optional(),
    teardownTimeout: duration.optional(),
  })
  .passthrough();

/** Keys whose meaning k6-lite does not implement; running without them would be a different test. */
const REFUSED = ['scenarios', 'stages', 'rps', 'executionSegment', 'paused', 'hosts', 'insecureSkipTLSVerify', 'tlsAuth'];

export interface RunPlan {
  vus: number;
  /** ms; with `iterations` the maximum duration (k6's shared-iterations maxDuration: 10 min). */
  durationMs: number;
  iterations: number | null;
  /** Iterations running at the end of `duration` get this long to finish, then are stopped (k6: 30 s). */
  gracefulStopMs: number;
  setupTimeoutMs: number;
  teardownTimeoutMs: number;
  thresholds: Record<string, string[]>;
}

export interface CliOverrides {
  vus?: number;
  duration?: string;
  iterations?: number;
}

export function planRun(raw: unknown, cli: CliOverrides): RunPlan {
  const parsed = scriptOptions.safeParse(raw ?? {});
  if (!parsed.success) throw new OptionsError(`options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const o = parsed.data;
  const refused = REFUSED.filter((k) => k in o);
  if (refused.length > 0)
    throw new OptionsError(
      `options.${refused.join(', options.')}: not implemented by k6-lite (use vus, duration, iterations), run the script with k6`,
    );
  const durationSpec = cli.duration ?? o.duration;
  const iterations = cli.iterations ?? o.iterations ?? (durationSpec === undefined ? 1 : null);
  const thresholds: Record<string, string[]> = {};
  for (const [metric, specs] of Object.entries(o.thresholds ?? {}))
    thresholds[metric] = specs.map((s) => (typeof s === 'string' ? s : s.threshold));
  return {
    vus: cli.vus ?? o.vus ?? 1,
    durationMs: durationSpec === undefined ? 600_000 : parseDuration(durationSpec, 'duration'),
    iterations,
    gracefulStopMs: 30_000,
    setupTimeoutMs: parseDuration(o.setupTimeout ?? '60s', 'setupTimeout'),
    teardownTimeoutMs: parseDuration(o.teardownTimeout ?? '60s', 'teardownTimeout'),
    thresholds,
  };
}
