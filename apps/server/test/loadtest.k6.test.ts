/**
 * The k6 scripts of loadtest/ against the real embedded server (`npm start`'s entry), briefly:
 * they must connect, send, receive pushes and page through inboxes with no error. Latency is not
 * asserted here (thresholds off: other suites share the machine); benchmarks measure it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServices } from '@seqline/testing';
import { ChildServer, freePort } from './child-server.ts';
import { SECRET } from './harness.ts';
import { count, probeK6, runK6, sum } from './k6-runner.ts';

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
