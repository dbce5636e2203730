/** `seqline-admin devices`: the real CLI against an embedded server lists a user's live sessions. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DeviceSession } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import { startCliServer, type CliServer } from './cli-harness.ts';

let s: CliServer;
beforeAll(async () => {
  s = await startCliServer();
});
afterAll(async () => {
  await s.stop();
});

async function open(user: string, query: string): Promise<WebSocket> {
  const token = await issueToken({ secret: s.secret, user, tenant: 'acme', ttlSeconds: 60 });
  const ws = new WebSocket(`ws://127.0.0.1:${s.server.port}/v1/ws?${query}`, { headers: { authorization: `Bearer ${token}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

describe('seqline-admin devices', () => {
  it('lists the live sessions of a user, in a table and as JSON; a closed one is gone', async () => {
    const phone = await open('ann', 'dev=phone-1&plat=ios');
    const web = await open('ann', 'plat=web');
    const shown = await s.cli('devices', 'ann', '--tenant', 'acme');
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toMatch(/devices of ann \(tenant acme\): 2 live/);
    expect(shown.stdout).toMatch(/phone-1\s+ios/);
    web.close();
    await new Promise((r) => web.once('close', r));
    const json = await s.cli('devices', 'ann', '--tenant', 'acme', '--json');
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout) as { devices: DeviceSession[] };
    expect(view.devices.map((d) => [d.dev, d.plat])).toEqual([['phone-1', 'ios']]);
    phone.close();
  });

  it('an invalid user id is refused by the server, exit code not 0', async () => {
    const refused = await s.cli('devices', 'a b', '--tenant', 'acme');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/BAD_REQUEST|ids/);
  });
});
