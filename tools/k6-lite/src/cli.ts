/**
 * k6-lite: runs a k6 script (the k6 API subset of loadtest/) without k6, for CI. Same command
 * line as k6 for what it supports:
 *
 *   node --import tsx tools/k6-lite/src/cli.ts run [--vus N] [--duration D] [--iterations N]
 *     [-e KEY=VALUE]... [--out json=FILE] [--no-thresholds] [--quiet] script.js
 *
 * Exit codes as k6: 0, 99 thresholds crossed, 100/101 setup/teardown timeout, 104 bad options,
 * 107 script error.
 */
import { resolve } from 'node:path';
import { EXIT, run, type RunArgs } from './host/run.ts';

class UsageError extends Error {
  override readonly name = 'UsageError';
}

const USAGE =
  'usage: k6-lite run [--vus N] [--duration D] [--iterations N] [-e KEY=VALUE]... [--out json=FILE] [--no-thresholds] [--quiet] script.js';
/** k6 flags that change nothing here (no progress bar, no usage report to send). */
const ACCEPTED_NOOPS = new Set(['--quiet', '-q', '--no-usage-report', '--no-color']);

function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag}: ${v} is not a positive integer`);
  return n;
}

export function parseArgs(argv: string[]): RunArgs {
  if (argv[0] !== 'run') throw new UsageError(USAGE);
  const vars: Record<string, string> = {};
  const parsed: RunArgs = {
    script: '',
    env: {},
    overrides: {},
    jsonOut: null,
    thresholds: true,
    log: (line) => process.stdout.write(`${line}\n`),
  };
  const rest = argv.slice(1);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (ACCEPTED_NOOPS.has(flag)) continue;
    switch (flag) {
      case '-e':
      case '--env': {
        const kv = value();
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new UsageError(`${flag} ${kv}: KEY=VALUE`);
        vars[kv.slice(0, eq)] = kv.slice(eq + 1);
        break;
      }
      case '-u':
      case '--vus':
        parsed.overrides.vus = positiveInt(flag, value());
        break;
      case '-i':
      case '--iterations':
        parsed.overrides.iterations = positiveInt(flag, value());
        break;
      case '-d':
      case '--duration':
        parsed.overrides.duration = value();
        break;
      case '--no-thresholds':
        parsed.thresholds = false;
        break;
      case '-o':
      case '--out': {
        const v = value();
        if (!v.startsWith('json=')) throw new UsageError(`--out ${v}: only json=FILE is implemented`);
        parsed.jsonOut = resolve(v.slice('json='.length));
        break;
      }
      default:
        if (flag.startsWith('-')) throw new UsageError(`${flag}: not implemented by k6-lite\n${USAGE}`);
        if (parsed.script) throw new UsageError(`one script only\n${USAGE}`);
        parsed.script = resolve(flag);
    }
  }
  if (!parsed.script) throw new UsageError(USAGE);
  // k6 run puts the process environment in __ENV, then the -e variables over it.
  parsed.env = { ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)), ...vars };
  return parsed;
}

async function main(): Promise<void> {
  let args: RunArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(EXIT.invalidConfig);
  }
  const code = await run(args);
  // Exit now: idle keep-alive HTTP connections would hold the process a few more seconds.
  process.exit(code);
}

await main();
