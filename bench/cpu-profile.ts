/**
 * Top self-time frames of a V8 CPU profile (`node --cpu-prof`), optionally of a time window only
 * (monotonic µs, the clock V8 stamps profiles with: process.hrtime in any process of the machine).
 *
 *   node --import tsx bench/cpu-profile.ts <file.cpuprofile> [top=25]
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FrameTime {
  frame: string;
  selfMs: number;
}

export interface ProfileTop {
  /** Sampled time in the window, idle excluded. */
  busyMs: number;
  idleMs: number;
  frames: FrameTime[];
}

/** `name file:line`, the file shortened to its package (or repo) path. */
function frameName(cf: CallFrame): string {
  const name = cf.functionName || '(anonymous)';
  if (cf.url === '') return name;
  const path = cf.url.replace(/^file:\/\//, '');
  const cut = path.lastIndexOf('/node_modules/');
  const short = cut >= 0 ? path.slice(cut + '/node_modules/'.length) : path.replace(/^.*?\/(apps|libs|bench)\//, '$1/');
  return `${name} ${short}:${cf.lineNumber + 1}`;
}

export async function readProfileTop(file: string, window: { fromMicros?: number; toMicros?: number } = {}): Promise<ProfileTop> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const names = new Map(profile.nodes.map((n) => [n.id, frameName(n.callFrame)]));
  const self = new Map<string, number>();
  const from = window.fromMicros ?? Number.NEGATIVE_INFINITY;
  const to = window.toMicros ?? Number.POSITIVE_INFINITY;
  let at = profile.startTime;
  let busy = 0;
  let idle = 0;
  // A sample stands for the time until the next one (as DevTools counts it).
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const next = profile.timeDeltas[i + 1] ?? 0;
    if (at < from || at > to) continue;
    const name = names.get(profile.samples[i] ?? -1) ?? '?';
    if (name === '(idle)') idle += next;
    else busy += next;
    self.set(name, (self.get(name) ?? 0) + next);
  }
  self.delete('(idle)');
  const frames = [...self].map(([frame, micros]) => ({ frame, selfMs: micros / 1000 })).sort((a, b) => b.selfMs - a.selfMs);
  return { busyMs: busy / 1000, idleMs: idle / 1000, frames };
}

export function formatProfileTop(top: ProfileTop, count: number): string[] {
  const lines = [`  busy ${top.busyMs.toFixed(0)} ms, idle ${top.idleMs.toFixed(0)} ms; self time, share of busy:`];
  for (const f of top.frames.slice(0, count)) {
    lines.push(
      `  ${((100 * f.selfMs) / Math.max(1e-9, top.busyMs)).toFixed(1).padStart(5)} %  ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.frame}`,
    );
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, count] = process.argv.slice(2);
  if (file === undefined) {
    process.stderr.write('usage: node --import tsx bench/cpu-profile.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const top = await readProfileTop(file);
  process.stdout.write(`${formatProfileTop(top, Number(count ?? 25)).join('\n')}\n`);
}
