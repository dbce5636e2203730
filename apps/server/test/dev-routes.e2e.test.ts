/**
 * The embedded server's demo page and dev token route (SEQLINE_DEV_ROUTES, on by default):
 * a loopback client gets a token that opens a real socket; a client on another address of
 * this machine is refused; the route is announced with a warning at start; `0` removes both
 * routes; an unbuilt demo is a warning, not a failure.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { createTokenVerifier } from '@seqline/protocol';
import { http, memoryLogger } from '../../gateway/test/harness.ts';
import { ConfigError, loadServerConfig, startEmbeddedServer, type RunningServer } from '../src/index.ts';
import { SECRET } from './harness.ts';

const EXTERNAL_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((a) => a?.family === 'IPv4' && !a.internal)?.address;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function start(
  env: Record<string, string>,
): Promise<{ server: RunningServer; logger: ReturnType<typeof memoryLogger>; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'seqline-dev-routes-'));
  const logger = memoryLogger();
  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: join(dir, 'data'),
    SEQLINE_SECRET: SECRET,
    ...env,
  });
  const server = await startEmbeddedServer(config, logger);
  cleanups.push(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { server, logger, dir };
}

const postToken = (port: number, user: string, host = '127.0.0.1') =>
  http(`http://${host}:${port}/dev/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', host: `localhost:${port}` },
    body: JSON.stringify({ user }),
  });

describe('embedded server, dev routes on (the default), bound to 0.0.0.0', async () => {
  const site = await mkdtemp(join(tmpdir(), 'seqline-demo-dist-'));
  await writeFile(join(site, 'index.html'), '<!doctype html><title>demo</title>');
  cleanups.push(() => rm(site, { recursive: true, force: true }));
  const { server, logger } = await start({ HOST: '0.0.0.0', SEQLINE_DEMO_DIR: site });

  it('warns at start that the dev token route is on, and serves the demo page at /', async () => {
    expect(logger.records.filter((r) => r.level === 'warn').map((r) => r.msg)).toContain(
      'dev token route is on: any process on this machine can get a token for any user (SEQLINE_DEV_ROUTES=0 turns it off)',
    );
    const page = await http(`http://127.0.0.1:${server.port}/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('gives a loopback client a token that opens a socket and sends', async () => {
    const answer = await postToken(server.port, 'carol');
    expect(answer.status).toBe(200);
    const { token } = JSON.parse(answer.body) as { token: string };
    expect(createTokenVerifier(SECRET)(token)).toMatchObject({ user: 'carol', tenant: 'default' });
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/v1/ws?token=${token}`);
    const reply = await new Promise<Record<string, unknown>>((resolve, reject) => {
      ws.once('open', () =>
        ws.send(JSON.stringify({ id: 1, op: 'send', appinfo: 'dev-1', to: { user: 'dave' }, type: 'text', body: { text: 'hi' } })),
      );
      ws.on('message', (data: WebSocket.RawData) => {
        const frame = JSON.parse(String(data)) as Record<string, unknown>;
        if (frame['id'] === 1) resolve(frame); // the push of carol's own copy may come first
      });
      ws.once('error', reject);
    });
    ws.close();
    expect(reply).toMatchObject({ id: 1, ok: true, duplicate: false });
  });

  it.skipIf(EXTERNAL_ADDRESS === undefined)('refuses a client connecting from another address of this machine (403)', async () => {
    const answer = await postToken(server.port, 'carol', EXTERNAL_ADDRESS);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    // The demo page itself is public: it holds no secret.
    expect((await http(`http://${EXTERNAL_ADDRESS}:${server.port}/`)).status).toBe(200);
  });
});

describe('embedded server, SEQLINE_DEV_ROUTES=0', async () => {
  const { server, logger } = await start({ SEQLINE_DEV_ROUTES: '0' });

  it('has neither the dev token route nor the demo page (404), and says nothing about them', async () => {
    expect((await postToken(server.port, 'carol')).status).toBe(404);
    expect((await http(`http://127.0.0.1:${server.port}/`)).status).toBe(404);
    expect(logger.records.some((r) => r.msg?.includes('dev token') || r.msg?.includes('demo page'))).toBe(false);
  });
});

describe('embedded server, demo not built', async () => {
  const { server, logger, dir } = await start({ SEQLINE_DEMO_DIR: '/nonexistent/seqline-demo' });

  it('starts, warns, answers / with 404 and still issues dev tokens', async () => {
    expect(dir).not.toBe('');
    expect(logger.records.some((r) => r.level === 'warn' && r.msg?.startsWith('demo page not built'))).toBe(true);
    expect((await http(`http://127.0.0.1:${server.port}/`)).status).toBe(404);
    expect((await postToken(server.port, 'carol')).status).toBe(200);
  });
});

describe('SEQLINE_DEV_ROUTES parsing', () => {
  it.each(['yes', 'on', '2', ''])('refuses %j', async (value) => {
    await expect(loadServerConfig({ SEQLINE_DEV_ROUTES: value, SEQLINE_SECRET: SECRET, SEQLINE_DATA_DIR: tmpdir() })).rejects.toThrow(
      ConfigError,
    );
  });
});
