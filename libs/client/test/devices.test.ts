/**
 * Devices and the login policy through the SDK, on a real embedded server: the device goes in
 * the socket URL, a replaced session emits `kicked` and never reconnects, its requests are all
 * answered or rejected with a typed error (none left hanging), and a malformed frame is ignored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import WsWebSocket, { WebSocketServer } from 'ws';
import { silentLogger } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '@seqline/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KICKED_CLOSE_CODE, SeqlineClient, SeqlineClientError, type ClientState, type SeqlineClientOptions } from '../src/index.ts';
import { parseServerFrame } from '../src/wire.ts';
import { waitFor } from './support/helpers.ts';

const SECRET = 'devices-e2e-secret-0123456789abcdef';
const TENANT = 'devices';
let tmp: string;
let server: RunningServer;
const clients: SeqlineClient[] = [];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'seqline-client-devices-'));
  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: join(tmp, 'data'),
    SEQLINE_SECRET: SECRET,
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
  });
  server = await startEmbeddedServer(config, silentLogger);
  await server.settings.update({ hooks: { tenant: TENANT, patch: { loginPolicy: 'one-per-platform' } } });
}, 60_000);
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

let n = 0;
function device(user: string, opts: Partial<SeqlineClientOptions>) {
  const client = new SeqlineClient({
    url: `ws://127.0.0.1:${server.port}`,
    token: () => issueToken({ secret: SECRET, user, tenant: TENANT, ttlSeconds: 600 }),
    WebSocket: WsWebSocket,
    requestTimeoutMs: 5_000,
    reconnectBackoff: { initialMs: 5, maxMs: 20 },
    ...opts,
  });
  clients.push(client);
  const states: ClientState[] = [];
  const kicked: unknown[] = [];
  client.on('state', (s) => void states.push(s));
  client.on('kicked', (k) => void kicked.push(k));
  return { client, states, kicked };
}

describe('devices through the SDK', () => {
  it('a second ios device kicks the first: kicked event with by, no reconnect, every request settled with an answer or a typed error', async () => {
    const user = `u${++n}`;
    const first = device(user, { device: { dev: 'phone-1', plat: 'ios' } });
    await first.client.connect();
    const sends = Array.from({ length: 30 }, (_, i) =>
      first.client.send({ to: { user: 'bob' }, type: 'text', body: { i } }).then(
        () => 'ok',
        (err: unknown) => (err instanceof SeqlineClientError ? err.code : 'untyped'),
      ),
    );
    const second = device(user, { device: { dev: 'phone-2', plat: 'ios' } });
    await second.client.connect();
    await waitFor(() => first.kicked.length === 1, 'the kicked event');
    expect(first.kicked).toEqual([{ by: { dev: 'phone-2', plat: 'ios' } }]);
    const outcomes = await Promise.all(sends);
    // Answered (ok), refused after the kick (UNAUTHORIZED), or cut by the close (DISCONNECTED/CLOSED): never a hang.
    for (const o of outcomes) expect(['ok', 'UNAUTHORIZED', 'DISCONNECTED', 'CLOSED']).toContain(o);
    expect(outcomes).toContain('ok');
    await new Promise((r) => setTimeout(r, 300)); // several reconnect backoffs
    expect(first.states.filter((s) => s === 'connected')).toHaveLength(1);
    expect(first.states.at(-1)).toBe('closed');
    await expect(first.client.syncNow()).rejects.toMatchObject({ code: 'CLOSED' });
    // The new device was not kicked back.
    expect(second.kicked).toEqual([]);
    await second.client.syncNow();
    expect(second.client.connected).toBe(true);
  });

  it('a web device does not kick the ios one', async () => {
    const user = `u${++n}`;
    const ios = device(user, { device: { dev: 'phone', plat: 'ios' } });
    await ios.client.connect();
    const web = device(user, { device: { plat: 'web' } });
    await web.client.connect();
    await web.client.syncNow();
    await new Promise((r) => setTimeout(r, 100));
    expect(ios.kicked).toEqual([]);
    expect(ios.client.connected).toBe(true);
  });

  it('a close with 4409 alone stops the client; a malformed kicked frame then another close does not', async () => {
    const peerServer = async (onPeer: (peer: WsWebSocket) => void) => {
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/v1/ws' });
      await new Promise<void>((resolve) => wss.on('listening', resolve));
      let connections = 0;
      wss.on('connection', (peer) => {
        connections += 1;
        onPeer(peer);
      });
      const port = (wss.address() as AddressInfo).port;
      return { url: `ws://127.0.0.1:${port}`, connections: () => connections, close: () => new Promise((r) => wss.close(r)) };
    };
    const quiet = await peerServer((peer) => peer.close(KICKED_CLOSE_CODE, 'session replaced by another login'));
    const a = device('x', { url: quiet.url, token: 'any' });
    await a.client.connect().catch(() => undefined);
    await waitFor(() => a.kicked.length === 1, 'kicked on 4409');
    expect(a.kicked).toEqual([{ by: {} }]);
    await new Promise((r) => setTimeout(r, 200));
    expect(quiet.connections()).toBe(1);
    await quiet.close();

    const noisy = await peerServer((peer) => {
      peer.send('{"op":"kicked","by":5}');
      peer.close(1001, 'going away');
    });
    const b = device('y', { url: noisy.url, token: 'any' });
    await b.client.connect().catch(() => undefined);
    await waitFor(() => noisy.connections() >= 3, 'reconnects after a normal close');
    expect(b.kicked).toEqual([]);
    b.client.close();
    await noisy.close();
  });

  it('decodes the kicked frame, keeping only string fields, and refuses a malformed one', () => {
    expect(parseServerFrame('{"op":"kicked","by":{"dev":"p2","plat":"ios"}}')).toEqual({ kind: 'kicked', by: { dev: 'p2', plat: 'ios' } });
    expect(parseServerFrame('{"op":"kicked","by":{"dev":5,"extra":"x"}}')).toEqual({ kind: 'kicked', by: {} });
    expect(parseServerFrame('{"op":"kicked"}')).toBeNull();
    expect(parseServerFrame('{"op":"kicked","by":["ios"]}')).toBeNull();
  });
});
