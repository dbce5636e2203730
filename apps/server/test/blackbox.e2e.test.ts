/**
 * Black box: `npm start` as a user runs it (built JS, the README's command), spoken to only
 * over the wire — WebSocket frames and HTTP — as a client app and an attacker would. Tokens are
 * minted with the shared secret, as an app's own auth service would mint them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '@seqline/protocol';
import { freePort } from './child-server.ts';
import { appinfo, SECRET, TestClient, waitFor } from './harness.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let server: ChildProcess;
let dataDir: string;
let port: number;
let output = '';
const open: TestClient[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'seqline-blackbox-'));
  port = await freePort();
  server = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SEQLINE_DATA_DIR: dataDir, SEQLINE_SECRET: SECRET, LOG_LEVEL: 'info' },
  });
  server.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  server.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  // npm start builds first (prestart), which takes a while on a cold tree.
  await waitFor(
    async () =>
      (await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      )) || undefined,
    170_000,
    `npm start to answer /healthz\n${output}`,
  );
}, 180_000);

afterAll(async () => {
  for (const c of open) c.close();
  // npm runs node in its own process group (detached above): signal the group, as a terminal would.
  if (server.pid !== undefined) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  await new Promise((resolve) => {
    if (server.exitCode !== null) resolve(null);
    else server.once('exit', resolve);
  });
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

async function connect(user: string): Promise<TestClient> {
  const c = await TestClient.connect(`ws://127.0.0.1:${port}/v1/ws`, user);
  open.push(c);
  return c;
}

describe('npm start, from outside', () => {
  it('logs which transport it chose, for this Node', () => {
    expect(output).toMatch(/gateway transport: (native uWebSockets\.js|ws package)/);
  });

  it('two users chat: a push arrives, a late sync by max seq gets the rest, a resend keeps one copy', async () => {
    const [alice, bob] = [await connect('bb-alice'), await connect('bb-bob')];
    const first = appinfo();
    await alice.ok('send', { appinfo: first, to: { user: bob.user }, type: 'text', body: { text: 'hi' } });
    await waitFor(() => bob.pushes.find((p) => p.entries.some((e) => e.appinfo === first)), 10_000, 'the push');
    // Over HTTP too, with the same token rules.
    const token = await issueToken({ secret: SECRET, user: alice.user, tenant: 'default', ttlSeconds: 60 });
    const second = appinfo();
    const sent = await fetch(`http://127.0.0.1:${port}/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appinfo: second, to: { user: bob.user }, type: 'text', body: { text: 'again' } }),
    });
    expect(sent.status).toBe(200);
    const again = await alice.ok<{ duplicate: boolean }>('send', {
      appinfo: second,
      to: { user: bob.user },
      type: 'text',
      body: { text: 'again' },
    });
    expect(again.duplicate).toBe(true);
    const inbox = await waitFor(async () => {
      const all = await bob.syncAll();
      return all.length >= 2 ? all : undefined;
    });
    expect(inbox.map((e) => e.appinfo)).toEqual([first, second]);
  });

  it('refuses an attacker: a replayed appinfo, a forged server id, a bad token, two credentials', async () => {
    const [alice, mallory, carol] = [await connect('bb-alice2'), await connect('bb-mallory'), await connect('bb-carol')];
    const x = appinfo();
    await alice.ok('send', { appinfo: x, to: { user: mallory.user }, type: 'text', body: { text: 'private' } });
    await waitFor(async () => (await mallory.syncAll()).some((e) => e.appinfo === x));
    expect(await mallory.call('send', { appinfo: x, to: { user: carol.user }, type: 'text', body: {} })).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN' },
    });
    expect(await mallory.call('send', { appinfo: `recall:${x}`, to: { user: carol.user }, type: 'text', body: {} })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
    expect(await carol.syncAll()).toEqual([]);
    const status = async (headers: Record<string, string>) =>
      (await fetch(`http://127.0.0.1:${port}/v1/sync?maxSeq=0`, { headers })).status;
    expect(await status({ authorization: 'Bearer not-a-token' })).toBe(401);
    const token = await issueToken({ secret: SECRET, user: carol.user, tenant: 'default', ttlSeconds: 60 });
    expect(await status({ authorization: `Bearer ${token}` })).toBe(200);
    expect(await status({ authorization: `Bearer ${token}, Bearer ${token}` })).toBe(401);
  });

  it('HEAD /healthz answers without a body', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });
});
