/**
 * tools/k6-lite, the runner of the loadtest/ smoke tests, on fixture scripts against a small
 * local HTTP + WebSocket echo server: what it counts and how it fails must match k6, or the
 * smoke tests would pass on a runner that counts nothing.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { count, runK6, sum } from './k6-runner.ts';

const FIXTURES = fileURLToPath(new URL('../../../tools/k6-lite/test/fixtures/', import.meta.url));

describe('k6-lite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seqline-k6-lite-'));
  let server: Server;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const status = /^\/status\/(\d{3})$/.exec(req.url ?? '')?.[1];
      res.writeHead(status ? Number(status) : 404).end();
    });
    const wss = new WebSocketServer({ server, path: '/echo' });
    wss.on('connection', (socket) => socket.on('message', (data, binary) => socket.send(data, { binary })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    env = {
      BASE: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      EXPECT_MAC: createHmac('sha256', 'key').update('data').digest('base64url'),
      EXPECT_B64: Buffer.from('hi?>').toString('base64url'),
    };
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs shared iterations, passes setup data, counts ws messages, http statuses and checks as k6 does', async () => {
    const run = await runK6(join(FIXTURES, 'echo.js'), {}, env, dir, 'echo-no-thresholds');
    expect(run.code, run.output).toBe(0);
    expect(count(run, 'iterations')).toBe(5);
    expect(sum(run, 'setup_data_ok')).toBe(5);
    expect(count(run, 'ws_sessions')).toBe(5);
    expect(sum(run, 'ws_msgs_sent')).toBe(25);
    expect(sum(run, 'echoed')).toBe(25);
    expect(sum(run, 'ws_msgs_received')).toBe(25);
    // 3 checks per iteration, the 500 one fails: recorded as 0, not dropped.
    expect(count(run, 'checks')).toBe(15);
    expect(sum(run, 'checks')).toBe(10);
    expect(count(run, 'http_reqs')).toBe(10);
    expect(sum(run, 'http_req_failed')).toBe(5);
  }, 60_000);

  it('evaluates thresholds, submetrics included: a crossed one exits 99 and is named', async () => {
    const run = await runK6(join(FIXTURES, 'echo.js'), {}, env, dir, 'echo-thresholds', []);
    expect(run.code, run.output).toBe(99);
    expect(run.output).toContain('✓ echoed: count>=25');
    expect(run.output).toContain('✓ http_req_failed{status:200}: rate==0');
    expect(run.output).toContain('✗ http_req_failed: rate<0.01 (observed 0.5000)');
  }, 60_000);

  it('an exception in an iteration is logged and the run goes on (k6: exit 0, the iteration not counted)', async () => {
    const run = await runK6(join(FIXTURES, 'iteration-throws.js'), {}, env, dir);
    expect(run.code, run.output).toBe(0);
    expect(sum(run, 'started')).toBe(3);
    expect(count(run, 'iterations')).toBe(2);
    expect(run.output).toContain('first iteration fails on purpose');
  }, 60_000);

  it('fail() in setup aborts the run with exit 107 and the message', async () => {
    const run = await runK6(join(FIXTURES, 'setup-fails.js'), {}, env, dir);
    expect(run.code).toBe(107);
    expect(run.output).toContain('setup refused on purpose');
    expect(count(run, 'iterations')).toBe(0);
  }, 60_000);

  it('a k6 module it does not implement fails the import by name (exit 107), never a silent no-op', async () => {
    const run = await runK6(join(FIXTURES, 'unsupported-module.js'), {}, env, dir);
    expect(run.code).toBe(107);
    expect(run.output).toContain('k6-lite does not implement "k6/browser"');
  }, 60_000);

  it('options it does not implement (scenarios) are refused with exit 104', async () => {
    const run = await runK6(join(FIXTURES, 'scenarios.js'), {}, env, dir);
    expect(run.code).toBe(104);
    expect(run.output).toContain('options.scenarios');
  }, 60_000);
});
