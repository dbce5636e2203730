/**
 * The k6 scripts of loadtest/ against the real embedded server (`npm start`'s entry), briefly,
 * run by tools/k6-lite (no k6 binary): they must connect, send, receive pushes and page through
 * inboxes with no error. Latency is not asserted here (thresholds off: other suites share the
 * machine); benchmarks measure it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ChildServer, freePort } from './child-server.ts';
import { SECRET } from './harness.ts';
import { expectCleanChatRun, expectCleanGroupRun, expectCleanSyncRun, runK6 } from './k6-runner.ts';

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
    expectCleanChatRun(run, 8);
  }, 60_000);

  it('group.js with small groups: sends acknowledged, members get inbox pushes (write-fanout), no error', async () => {
    const run = await runK6(
      'group.js',
      { VUS: '8', USERS: '8', GROUPS: '2', GROUP_SIZE: '6', RATE: '4', DURATION: '5s', SESSION_S: '3' },
      env,
      dir,
      'group-small',
    );
    expectCleanGroupRun(run, 8, 'write');
  }, 60_000);

  it('group.js with one huge group: members get group.push frames of its stream (read-fanout), no error', async () => {
    const run = await runK6(
      'group.js',
      { VUS: '8', USERS: '8', GROUPS: '1', GROUP_SIZE: '2100', RATE: '4', DURATION: '5s', SESSION_S: '3' },
      env,
      dir,
      'group-huge',
    );
    expectCleanGroupRun(run, 8, 'read');
  }, 60_000);

  it('sync.js: pages through the inboxes chat.js filled, no failed request', async () => {
    const run = await runK6('sync.js', { VUS: '4', USERS: '8', DURATION: '2s' }, env, dir);
    expectCleanSyncRun(run);
  }, 60_000);
});
