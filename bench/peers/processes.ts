/**
 * Child processes of the peers bench (Centrifugo, its Redis, Seqline's worker and gateway):
 * started, waited for, scheduled alike, stopped — and killed if the bench dies first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { sleep } from '../support.ts';

const OUTPUT_TAIL_CHARS = 8000;
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * Every server process of every system runs under the same policy. SCHED_BATCH by default, as
 * the shared services do (docs/services.md) and as bench/distributed-stack.ts starts its children:
 * the load generator stays SCHED_OTHER and reads a frame the moment it lands.
 * BENCH_SCHED_BATCH=0 leaves everything under SCHED_OTHER.
 */
const SCHED_BATCH = process.env['BENCH_SCHED_BATCH'] !== '0' && spawnSync('chrt', ['--batch', '0', 'true']).status === 0;

/** Puts every thread of `pid` under SCHED_BATCH (threads it starts later inherit it). */
export function scheduleLikeTheOthers(pid: number): void {
  if (SCHED_BATCH) spawnSync('chrt', ['--all-tasks', '--batch', '--pid', '0', String(pid)]);
}

export const schedulingPolicy = (): string => (SCHED_BATCH ? 'SCHED_BATCH' : 'SCHED_OTHER');

export interface Service {
  label: string;
  pid: number;
  /** The last 8 kB it wrote (stdout and stderr). */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServiceSpec {
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Ready once a line containing this text is printed, or once `probe` resolves true. */
  readyText?: string;
  probe?: () => Promise<boolean>;
  timeoutMs?: number;
}

export async function startService(spec: ServiceSpec): Promise<Service> {
  const proc = spawn(spec.command, spec.args, { env: { ...process.env, ...spec.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  let output = '';
  let seen = false;
  const keep = (d: Buffer) => {
    const text = d.toString();
    if (spec.readyText !== undefined && (output.slice(-spec.readyText.length) + text).includes(spec.readyText)) seen = true;
    output = (output + text).slice(-OUTPUT_TAIL_CHARS);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const pid = proc.pid;
  if (pid === undefined) throw new Error(`${spec.label}: not started`);
  const service: Service = {
    label: spec.label,
    pid,
    tail: () => output,
    async stop(graceMs = 15_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        live.delete(proc);
        return;
      }
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(killer);
      live.delete(proc);
    },
  };
  const deadline = performance.now() + (spec.timeoutMs ?? 60_000);
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new Error(`${spec.label} exited early (${proc.exitCode ?? proc.signalCode}): ${output.slice(-2000)}`);
    if (seen || (spec.probe !== undefined && (await spec.probe()))) break;
    if (performance.now() > deadline) {
      await service.stop(1000);
      throw new Error(`${spec.label} not ready after ${spec.timeoutMs ?? 60_000} ms: ${output.slice(-2000)}`);
    }
    await sleep(50);
  }
  scheduleLikeTheOthers(pid);
  return service;
}

/** True when GET `url` answers 200. */
export async function answers200(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}
