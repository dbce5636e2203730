/**
 * Runs the k6 scripts of loadtest/ for the smoke tests (embedded server, distributed stack):
 * thresholds off, every data point kept by metric (k6's `--out json`), so a test asserts on
 * what k6 itself counted. Needs k6: scripts/k6.sh builds it into .services/bin (.ci/run does),
 * or K6_BIN / a k6 on PATH.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { ServiceProbe } from '@seqline/testing';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const K6 = process.env.K6_BIN ?? (existsSync(join(ROOT, '.services/bin/k6')) ? join(ROOT, '.services/bin/k6') : 'k6');

export function probeK6(): ServiceProbe {
  const r = spawnSync(K6, ['version'], { encoding: 'utf8' });
  return r.status === 0 ? { ok: true } : { ok: false, reason: `no k6 at ${K6} (${r.error?.message ?? r.stderr.trim()})` };
}

export interface K6Run { code: number | null; output: string; points: Map<string, number[]> }

/**
 * Runs a script with thresholds off; returns its exit code and every data point by metric.
 * `label` names its output file in `dir` (runs side by side need different labels).
 */
export function runK6(script: string, vars: Record<string, string>, env: Record<string, string>, dir: string, label = script): Promise<K6Run> {
  const out = join(dir, `${label}.ndjson`);
  const args = ['run', '--quiet', '--no-thresholds', '--no-usage-report', `--out=json=${out}`, ...Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]), join(ROOT, 'loadtest', script)];
  return new Promise((resolve, reject) => {
    const proc = spawn(K6, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    proc.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    proc.once('error', reject);
    proc.once('exit', (code) => {
      const points = new Map<string, number[]>();
      if (existsSync(out)) {
        for (const line of readFileSync(out, 'utf8').split('\n')) {
          if (!line.includes('"type":"Point"')) continue;
          const point = JSON.parse(line) as { type: string; metric: string; data?: { value?: number } };
          if (point.type !== 'Point' || typeof point.data?.value !== 'number') continue;
          const values = points.get(point.metric) ?? [];
          values.push(point.data.value);
          points.set(point.metric, values);
        }
      }
      resolve({ code, output, points });
    });
  });
}

export const count = (run: K6Run, metric: string) => run.points.get(metric)?.length ?? 0;
export const sum = (run: K6Run, metric: string) => (run.points.get(metric) ?? []).reduce((a, b) => a + b, 0);

/**
 * A chat.js run went through: exit 0, no `seqline_errors`, every check passed (one per VU
 * session at least), more than 50 acks and 10 pushes timed.
 */
export function expectCleanChatRun(run: K6Run, minChecks: number): void {
  expect(run.code, run.output).toBe(0);
  expect(sum(run, 'seqline_errors'), run.output).toBe(0);
  expect(count(run, 'checks')).toBeGreaterThanOrEqual(minChecks);
  expect(sum(run, 'checks')).toBe(count(run, 'checks')); // every check passed (1 = pass)
  expect(count(run, 'seqline_send_ack_ms')).toBeGreaterThan(50);
  expect(count(run, 'seqline_send_push_ms')).toBeGreaterThan(10);
}

/**
 * A group.js run went through: exit 0, no `seqline_errors`, every check passed, more than 20
 * acks, and more than 10 deliveries all of the expected kind: inbox pushes for write-fanout
 * groups, `group.push` frames of the stream for read-fanout (huge) ones.
 */
export function expectCleanGroupRun(run: K6Run, minChecks: number, fanout: 'write' | 'read'): void {
  expect(run.code, run.output).toBe(0);
  expect(sum(run, 'seqline_errors'), run.output).toBe(0);
  expect(count(run, 'checks')).toBeGreaterThanOrEqual(minChecks);
  expect(sum(run, 'checks')).toBe(count(run, 'checks'));
  expect(count(run, 'seqline_group_send_ack_ms')).toBeGreaterThan(20);
  const [expected, other] = fanout === 'write' ? ['seqline_group_push_ms', 'seqline_group_stream_push_ms'] : ['seqline_group_stream_push_ms', 'seqline_group_push_ms'];
  expect(count(run, expected), run.output).toBeGreaterThan(10);
  expect(count(run, other)).toBe(0);
}

/** A sync.js run went through: exit 0, more than 10 pages, no failed request, every check passed. */
export function expectCleanSyncRun(run: K6Run): void {
  expect(run.code, run.output).toBe(0);
  expect(count(run, 'seqline_sync_page_ms')).toBeGreaterThan(10);
  expect(count(run, 'http_req_failed')).toBeGreaterThan(10);
  expect(sum(run, 'http_req_failed')).toBe(0);
  expect(sum(run, 'checks')).toBe(count(run, 'checks'));
}
