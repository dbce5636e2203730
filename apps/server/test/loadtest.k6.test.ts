/**
 * The k6 scripts of loadtest/ against the real embedded server (`npm start`'s entry), briefly:
 * they must connect, send, receive pushes and page through inboxes with no error. Latency is not
 * asserted here (thresholds off: other suites share the machine); benchmarks measure it. Needs
 * k6: scripts/k6.sh builds it into .services/bin (.ci/run does), or K6_BIN / a k6 on PATH.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServices, type ServiceProbe } from '@seqline/testing';
import { ChildServer, freePort } from './child-server.ts';
import { SECRET } from './harness.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const K6 = process.env.K6_BIN ?? (existsSync(join(ROOT, '.services/bin/k6')) ? join(ROOT, '.services/bin/k6') : 'k6');

function probeK6(): ServiceProbe {
  const r = spawnSync(K6, ['version'], { encoding: 'utf8' });
  return r.status === 0 ? { ok: true } : { ok: false, reason: `no k6 at ${K6} (${r.error?.message ?? r.stderr.trim()})` };
}

interface K6Run { code: number | null; output: string; points: Map<string, number[]> }

/** Runs a script with thresholds off; returns its exit code and every data point by metric. */
function runK6(script: string, vars: Record<string, string>, env: Record<string, string>, dir: string): Promise<K6Run> {
  const out = join(dir, `${script}.ndjson`);
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

const count = (run: K6Run, metric: string) => run.points.get(metric)?.length ?? 0;
const sum = (run: K6Run, metric: string) => (run.points.get(metric) ?? []).reduce((a, b) => a + b, 0);

if (requireServices(probeK6(), 'k6 load-test scripts', 'k6', 'build it with bash scripts/k6.sh install')) {
  describe('k6 load-test scripts against the embedded server', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seqline-k6-'));
    let server: ChildServer;
    let env: Record<string, string>;
    beforeAll(async () => {
      server = new ChildServer(await freePort(), join(dir, 'data'));
      await server.start();
      env = { SEQLINE_SECRET: SECRET, SEQLINE_URL: `http://127.0.0.1:${server.port}` };
    });
    afterAll(async () => {
      await server.terminate();
      rmSync(dir, { recursive: true, force: true });
    });

    it('chat.js: every VU upgrades, every send is acknowledged, peers get pushes, no error', async () => {
      // Peers drawn from the VUs themselves, so most pushes reach a connected socket.
      const run = await runK6('chat.js', { VUS: '8', USERS: '8', RATE: '4', DURATION: '6s', SESSION_S: '3' }, env, dir);
      expect(run.code, run.output).toBe(0);
      expect(sum(run, 'seqline_errors')).toBe(0);
      expect(count(run, 'checks')).toBeGreaterThanOrEqual(8);
      expect(sum(run, 'checks')).toBe(count(run, 'checks')); // every check passed (1 = pass)
      expect(count(run, 'seqline_send_ack_ms')).toBeGreaterThan(50);
      expect(count(run, 'seqline_send_push_ms')).toBeGreaterThan(10);
    }, 60_000);

    it('sync.js: pages through the inboxes chat.js filled, no failed request', async () => {
      const run = await runK6('sync.js', { VUS: '4', USERS: '8', DURATION: '2s' }, env, dir);
      expect(run.code, run.output).toBe(0);
      expect(count(run, 'seqline_sync_page_ms')).toBeGreaterThan(10);
      expect(count(run, 'http_req_failed')).toBeGreaterThan(10);
      expect(sum(run, 'http_req_failed')).toBe(0);
      expect(sum(run, 'checks')).toBe(count(run, 'checks'));
    }, 60_000);
  });
}
