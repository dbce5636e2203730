/**
 * The embedded server's sockets answer for their token and their user (docs/protocol.md):
 * `seqline-admin limits set --per-user-sockets` lowers the per-user cap live (the real CLI,
 * through the admin API), and a socket renewed with `auth` outlives its first token while a
 * forged or foreign renewal changes nothing.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '@seqline/protocol';
import { startCliServer, type CliServer } from '../../admin/test/cli-harness.ts';
import { openSocket, type Opened } from './hostile/raw-socket.ts';

let s: CliServer;
const sockets: WebSocket[] = [];
beforeAll(async () => {
  s = await startCliServer();
});
afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  await s.stop();
});

async function open(token: string): Promise<Opened> {
  const o = await openSocket(s.url.replace(/^http/, 'ws') + '/v1/ws', token);
  sockets.push(o.ws);
  return o;
}

const stillOpen = async (o: Opened) => (await o.call('sync', { maxSeq: 0 }))['ok'] === true;

describe('per-user sockets and token renewal (embedded server)', () => {
  it('default cap 20: the 21st and 22nd sockets close the two oldest with 4429', async () => {
    const token = await issueToken({ secret: s.secret, user: 'many', ttlSeconds: 600 });
    const opened: Opened[] = [];
    for (let i = 0; i < 22; i++) opened.push(await open(token));
    for (const oldest of opened.slice(0, 2)) expect(await oldest.closed).toEqual({ code: 4429, reason: 'too many sockets for this user' });
    for (const kept of [opened[2]!, opened[21]!]) expect(await stillOpen(kept)).toBe(true);
    for (const o of opened) o.ws.close();
  });

  it('`seqline-admin limits set --per-user-sockets 2` applies to the next connection, live', async () => {
    const token = await issueToken({ secret: s.secret, user: 'phone', ttlSeconds: 600 });
    const first = [await open(token), await open(token), await open(token)];
    const set = await s.cli('limits', 'set', '--per-user-sockets', '2');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/per-user-sockets\s+2/);
    const shown = await s.cli('--json', 'limits', 'show');
    expect(JSON.parse(shown.stdout)).toMatchObject({ limits: { perUserSockets: 2 } });
    expect(await stillOpen(first[0]!)).toBe(true); // open sockets stay until the user connects again
    const newest = await open(token);
    for (const oldest of first.slice(0, 2)) expect((await oldest.closed).code).toBe(4429);
    expect(await stillOpen(first[2]!)).toBe(true);
    expect(await stillOpen(newest)).toBe(true);
    const refused = await s.cli('limits', 'set', '--per-user-sockets', '0');
    expect(refused.code).not.toBe(0);
    expect((await s.cli('limits', 'set', '--per-user-sockets', '20')).code).toBe(0);
  });

  it('a socket renewed with auth outlives its first token; a forged or foreign renewal changes nothing', async () => {
    const target = Date.now() + 2500;
    const short = await issueToken({ secret: s.secret, user: 'renewer', ttlSeconds: 1, now: target - 1000 });
    const oldExpMs = Math.floor(target / 1000) * 1000;
    const renewed = await open(short);
    const other = await open(short);
    const forged = await issueToken({ secret: 'not-the-server-secret-0123456789', user: 'renewer', ttlSeconds: 600 });
    const foreign = await issueToken({ secret: s.secret, user: 'someone-else', ttlSeconds: 600 });
    expect(await other.call('auth', { token: forged })).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    expect(await other.call('auth', { token: foreign })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    const fresh = await issueToken({ secret: s.secret, user: 'renewer', ttlSeconds: 600 });
    expect(await renewed.call('auth', { token: fresh })).toMatchObject({ ok: true, exp: expect.any(Number) });
    expect(await other.closed).toEqual({ code: 4401, reason: 'token expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(oldExpMs - 50);
    expect(await stillOpen(renewed)).toBe(true);
    renewed.ws.close();
  });
});
