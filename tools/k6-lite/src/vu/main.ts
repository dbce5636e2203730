/**
 * A VU's worker thread: runs the script's init context, then (VU 0) setup and teardown on the
 * host's command, or (VUs 1..n) iterations of the default function from the host's start until
 * the run's end or the shared iteration count, like k6's constant-vus / shared-iterations.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';
import type { HostEvent, VuWorkerData } from '../protocol.ts';
import { runtime } from './runtime.ts';

type Fn = (data?: unknown) => unknown;
interface ScriptModule {
  options?: unknown;
  setup?: Fn;
  teardown?: Fn;
  default?: Fn;
}

const config = workerData as VuWorkerData;
runtime.attach(config.port, config.signal, config.vu);
const globals = globalThis as Record<string, unknown>;
globals.__ENV = { ...config.env };
globals.__VU = config.vu;
globals.__ITER = 0;
// k6 prints console output as log lines (source=console); here through the VU's channel, in order.
globals.console = {
  ...console,
  log: (...a: unknown[]) => runtime.log('INFO', ...a),
  info: (...a: unknown[]) => runtime.log('INFO', ...a),
  debug: (...a: unknown[]) => runtime.log('DEBU', ...a),
  warn: (...a: unknown[]) => runtime.log('WARN', ...a),
  error: (...a: unknown[]) => runtime.log('ERRO', ...a),
};
globals.open = (path: string, mode?: 'b') => {
  if (runtime.phase !== 'init') throw new Error('open(): only in the init context');
  const bytes = readFileSync(resolve(dirname(config.script), path));
  return mode === 'b' ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) : bytes.toString('utf8');
};

const describe = (e: unknown) => (e instanceof Error ? (e.stack ?? e.message) : String(e));
const command = <T extends HostEvent['t']>(t: T) => runtime.take((e): e is Extract<HostEvent, { t: T }> => e.t === t)!;
const parseData = (json: string | undefined): unknown => (json === undefined ? undefined : JSON.parse(json));

/**
 * Waits to be terminated by the host. A thread that ended on its own could exit before the host
 * has read its last message (the worker's exit and its port's messages are not ordered).
 */
function park(): never {
  for (;;) runtime.take((_e): _e is never => false);
}

function fatal(where: string, e: unknown): never {
  runtime.flush();
  runtime.post({ t: 'fatal', message: `${where}: ${describe(e)}` });
  park();
}

let script: ScriptModule;
try {
  script = (await import(pathToFileURL(config.script).href)) as ScriptModule;
} catch (e) {
  fatal('init', e);
}
const options: unknown = script.options === undefined ? undefined : JSON.parse(JSON.stringify(script.options));
runtime.post({
  t: 'init.done',
  options,
  exports: {
    setup: typeof script.setup === 'function',
    teardown: typeof script.teardown === 'function',
    default: typeof script.default === 'function',
  },
});

if (config.vu === 0) {
  command('cmd.setup');
  runtime.phase = 'setup';
  let setupData: string | undefined;
  try {
    const data = await script.setup?.();
    setupData = data === undefined ? undefined : JSON.stringify(data);
  } catch (e) {
    fatal('setup', e);
  }
  runtime.flush();
  runtime.post({ t: 'setup.done', data: setupData });
  const { setupData: teardownData } = command('cmd.teardown');
  runtime.phase = 'teardown';
  try {
    await script.teardown?.(parseData(teardownData));
  } catch (e) {
    fatal('teardown', e);
  }
  runtime.flush();
  runtime.post({ t: 'teardown.done' });
  park();
} else {
  const start = command('cmd.start');
  runtime.phase = 'vu';
  const data = parseData(start.setupData);
  const claimed = config.iterations ? new Int32Array(config.iterations.claimed) : null;
  const total = config.iterations?.total ?? Infinity;
  const run = script.default;
  let iteration = 0;
  while (run && Date.now() < start.endAt) {
    if (claimed && Atomics.add(claimed, 0, 1) >= total) break;
    globals.__ITER = iteration;
    const began = Date.now();
    try {
      await run(data);
      runtime.emit('iterations', 'counter', 'default', 1, {});
      runtime.emit('iteration_duration', 'trend', 'time', Date.now() - began, {});
    } catch (e) {
      // k6 logs an iteration's exception and goes on with the next iteration.
      runtime.log('ERRO', `iteration ${iteration}: ${describe(e)}`);
    }
    iteration += 1;
  }
  runtime.flush();
  runtime.post({ t: 'vu.done', iterations: iteration });
  park();
}
