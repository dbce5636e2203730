/**
 * Runs the k6 scripts of loadtest/ for the smoke tests (embedded server, distributed stack) with
 * tools/k6-lite, the in-repo runner of the k6 API they use (k6 itself is AGPL: the project does
 * not build or ship it; users bring their own). Thresholds off, every data point kept by metric
 * (k6's `--out json` format), so a test asserts on what the runner counted.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const K6_LITE = join(ROOT, 'tools/k6-lite/src/cli.ts');

export interface K6Run {
  code: number | null;
  output: string;
  points: Map<string, number[]>;
}

/**
 * Runs a script with thresholds off; returns its exit code and every data point by metric.
 * `label` names its output file in `dir` (runs side by side need different labels). `script`:
 * a file of loadtest/, or an absolute path.
 */
export function runK6(
  script: string,
  vars: Record<string, string>,
  env: Record<string, string>,
  dir: string,
  label = script,
  flags = ['--no-thresholds'],
): Promise<K6Run> {
  const out = join(dir, `${label.replaceAll('/', '_')}.ndjson`);
  const args = [
    '--import',
    'tsx',
    K6_LITE,
    'run',
    '--quiet',
    ...flags,
    `--out=json=${out}`,
    ...Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    script.startsWith('/') ? script : join(ROOT, 'loadtest', script),
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    proc.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
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
  const [expected, other] =
    fanout === 'write'
      ? ['seqline_group_push_ms', 'seqline_group_stream_push_ms']
      : ['seqline_group_stream_push_ms', 'seqline_group_push_ms'];
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
