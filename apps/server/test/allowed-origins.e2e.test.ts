/**
 * SEQLINE_ALLOWED_ORIGINS on the embedded server. Unset (or blank), with the dev routes on — what
 * `npm start` runs — the page's own origin is allowed and every other origin refused; with the
 * dev routes off, any origin (tokens are not ambient). Set, it means exactly its list. A value
 * that would allow no browser stops the start with the variable named. Requests without an
 * Origin (curl, servers, apps) are never subject to it.
 */
import { request } from 'node:http';
import { issueToken } from '@seqline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { upgradeStatus } from '../../gateway/test/harness.ts';
import { ConfigError, loadServerConfig } from '../src/index.ts';
import { appinfo, SECRET, startTestServer, type TestServer } from './harness.ts';

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function start(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer(env);
  servers.push(server);
  return server;
}

/** A browser's send over HTTP: Host as the page was loaded, Origin as the page's (two values: two Origin headers). */
async function sendFrom(server: TestServer, host: string, origin: string | string[] | undefined): Promise<number> {
  const token = await issueToken({ secret: SECRET, user: 'alice', ttlSeconds: 600 });
  const body = JSON.stringify({ appinfo: appinfo(), to: { user: 'bob' }, type: 'text', body: { text: 'hi' } });
  const headers: Record<string, string | string[]> = { host, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  if (origin !== undefined) headers['origin'] = origin;
  return new Promise((resolve, reject) => {
    const req = request(`http://127.0.0.1:${server.port}/v1/send`, { method: 'POST', headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function upgradeFrom(server: TestServer, host: string, origin: string): Promise<number> {
  const token = await issueToken({ secret: SECRET, user: 'alice', ttlSeconds: 600 });
  return (await upgradeStatus(`ws://127.0.0.1:${server.port}/v1/ws?token=${token}`, { host, origin })).status;
}

describe('loadServerConfig: allowedOrigins', () => {
  const load = (env: Record<string, string>) =>
    loadServerConfig({ SEQLINE_SECRET: SECRET, SEQLINE_DATA_DIR: '/tmp/seqline-origins-config', ...env });

  it.each<Record<string, string>>([{}, { SEQLINE_ALLOWED_ORIGINS: '' }, { SEQLINE_ALLOWED_ORIGINS: '  ' }])(
    '%j with the dev routes on (the default): the page’s own origin',
    async (env) => {
      expect((await load(env)).allowedOrigins).toBe('same-origin');
    },
  );

  it('unset with the dev routes off: any origin', async () => {
    expect((await load({ SEQLINE_DEV_ROUTES: '0' })).allowedOrigins).toBeUndefined();
    expect((await load({ SEQLINE_DEV_ROUTES: '0', SEQLINE_ALLOWED_ORIGINS: '' })).allowedOrigins).toBeUndefined();
  });

  it('set: exactly its list in either mode', async () => {
    for (const devRoutes of ['0', '1']) {
      const config = await load({
        SEQLINE_DEV_ROUTES: devRoutes,
        SEQLINE_ALLOWED_ORIGINS: 'https://App.example.com/, http://localhost:3000',
      });
      expect(config.allowedOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
    }
    expect((await load({ SEQLINE_ALLOWED_ORIGINS: '*' })).allowedOrigins).toEqual(['*']);
  });

  it.each([',', 'localhost:8080', 'https://app.example.com/chat'])(
    '%j allows no browser: the start is refused, naming the variable',
    async (value) => {
      await expect(load({ SEQLINE_ALLOWED_ORIGINS: value })).rejects.toThrow(ConfigError);
      await expect(load({ SEQLINE_ALLOWED_ORIGINS: value })).rejects.toThrow(/SEQLINE_ALLOWED_ORIGINS/);
    },
  );
});

describe('embedded server, SEQLINE_ALLOWED_ORIGINS unset, dev routes on (npm start)', async () => {
  const server = await start({});
  const host = `localhost:${server.port}`;

  it("the page's own origin may send over HTTP and open a socket", async () => {
    expect(await sendFrom(server, host, `http://${host}`)).toBe(200);
    expect(await upgradeFrom(server, host, `http://${host}`)).toBe(101);
  });

  it('a foreign origin is refused (403) on the HTTP API and the upgrade, even with a valid token', async () => {
    for (const origin of ['https://evil.example', `http://localhost:${server.port + 1}`, 'null']) {
      expect(await sendFrom(server, host, origin)).toBe(403);
      expect(await upgradeFrom(server, host, origin)).toBe(403);
    }
  });

  it('two Origin headers are one unknown origin, even both naming the page', async () => {
    expect(await sendFrom(server, host, [`http://${host}`, `http://${host}`])).toBe(403);
  });

  it('a client without an Origin (curl, a server, an app) is not subject to it', async () => {
    expect(await sendFrom(server, host, undefined)).toBe(200);
  });
});

describe('embedded server, SEQLINE_ALLOWED_ORIGINS unset, dev routes off', async () => {
  const server = await start({ SEQLINE_DEV_ROUTES: '0' });

  it('any origin (tokens are not ambient credentials)', async () => {
    expect(await sendFrom(server, `localhost:${server.port}`, 'https://app.example.com')).toBe(200);
  });
});

describe('embedded server, SEQLINE_ALLOWED_ORIGINS set', async () => {
  const server = await start({ SEQLINE_ALLOWED_ORIGINS: 'https://app.example.com' });
  const host = `localhost:${server.port}`;

  it('exactly its list: the listed origin is allowed, the page’s own origin is not unless listed', async () => {
    expect(await sendFrom(server, host, 'https://app.example.com')).toBe(200);
    expect(await sendFrom(server, host, `http://${host}`)).toBe(403);
    expect(await upgradeFrom(server, host, 'https://app.example.com')).toBe(101);
    expect(await upgradeFrom(server, host, 'https://evil.example')).toBe(403);
  });
});
