/**
 * One k6-lite run, in k6's order: init every VU (VU 0 first, for the options), setup on VU 0,
 * the VUs' iterations until the duration ends or the shared iterations are done (an iteration
 * running at the end gets the graceful stop to finish), teardown, then the summary and the
 * thresholds. Returns k6's exit code.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { OptionsError, planRun, type CliOverrides } from '../options.ts';
import type { Point } from '../protocol.ts';
import { MetricStore } from './metrics.ts';
import { ScriptError, StepTimeoutError, VuHandle } from './vu-handle.ts';

export const EXIT = { ok: 0, thresholdsFailed: 99, setupTimeout: 100, teardownTimeout: 101, invalidConfig: 104, scriptError: 107 } as const;

export interface RunArgs {
  script: string;
  env: Record<string, string>;
  overrides: CliOverrides;
  /** k6's `--out json=<file>`. */
  jsonOut: string | null;
  thresholds: boolean;
  log: (line: string) => void;
}

const INIT_TIMEOUT_MS = 60_000;

export async function run(args: RunArgs): Promise<number> {
  const out = args.jsonOut ? createWriteStream(args.jsonOut) : null;
  const early: Point[] = [];
  let store: MetricStore | undefined;
  const onPoints = ({ points }: { points: Point[] }) => {
    for (const p of points) {
      if (store) store.add(p);
      else early.push(p);
    }
  };
  const handles: VuHandle[] = [];
  const spawn = (vu: number, iterations: { claimed: SharedArrayBuffer; total: number } | null) => {
    const h = new VuHandle(vu, { script: args.script, env: args.env, iterations }, onPoints);
    handles.push(h);
    return h;
  };
  try {
    const vu0 = spawn(0, null);
    const init = await vu0.expect('init.done', INIT_TIMEOUT_MS);
    const plan = planRun(init.options, args.overrides);
    if (!init.exports.default) throw new ScriptError('the script exports no default function');
    store = new MetricStore(plan.thresholds, out ? (line) => out.write(`${line}\n`) : null);
    for (const p of early.splice(0)) store.add(p);
    const iterations = plan.iterations === null ? null : { claimed: new SharedArrayBuffer(4), total: plan.iterations };
    const vus = Array.from({ length: plan.vus }, (_, i) => spawn(i + 1, iterations));
    await Promise.all(vus.map((v) => v.expect('init.done', INIT_TIMEOUT_MS)));

    vu0.command({ t: 'cmd.setup' });
    const setup = await vu0.expect('setup.done', plan.setupTimeoutMs);
    const startedAt = Date.now();
    const endAt = startedAt + plan.durationMs;
    args.log(
      `k6-lite: ${plan.vus} VUs, ${plan.iterations === null ? `for ${plan.durationMs / 1000}s` : `${plan.iterations} shared iterations (max ${plan.durationMs / 1000}s)`}`,
    );
    for (const v of vus) v.command({ t: 'cmd.start', endAt, setupData: setup.data });
    let completed = 0;
    await Promise.all(
      vus.map(async (v) => {
        try {
          const done = await v.expect('vu.done', endAt - Date.now() + plan.gracefulStopMs);
          completed += done.iterations;
        } catch (e) {
          args.log(`k6-lite: vu ${v.vu} interrupted: ${e instanceof Error ? e.message : String(e)}`);
        }
        await v.stop();
      }),
    );
    const seconds = (Date.now() - startedAt) / 1000;

    vu0.command({ t: 'cmd.teardown', setupData: setup.data });
    await vu0.expect('teardown.done', plan.teardownTimeoutMs);
    if (store.conflicts.length > 0) throw new ScriptError(store.conflicts.join('; '));

    args.log(`k6-lite: ${completed} complete iterations in ${seconds.toFixed(1)}s`);
    for (const line of store.summary(seconds)) args.log(line);
    if (!args.thresholds) return EXIT.ok;
    const results = store.evaluate(seconds);
    for (const r of results)
      args.log(
        `  ${r.ok ? '✓' : '✗'} ${r.key}: ${r.expression} (observed ${r.observed === undefined ? 'no points' : r.observed.toFixed(4)})`,
      );
    const failed = results.filter((r) => !r.ok);
    if (failed.length > 0)
      args.log(`k6-lite: thresholds on metrics ${[...new Set(failed.map((r) => r.key))].join(', ')} have been crossed`);
    return failed.length > 0 ? EXIT.thresholdsFailed : EXIT.ok;
  } catch (e) {
    args.log(`k6-lite: ${e instanceof Error ? e.message : String(e)}`);
    if (e instanceof OptionsError) return EXIT.invalidConfig;
    if (e instanceof StepTimeoutError && e.step === 'setup.done') return EXIT.setupTimeout;
    if (e instanceof StepTimeoutError && e.step === 'teardown.done') return EXIT.teardownTimeout;
    return EXIT.scriptError;
  } finally {
    await Promise.all(handles.map((h) => h.stop()));
    if (out) {
      out.end();
      await once(out, 'close');
    }
  }
}
