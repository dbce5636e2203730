/**
 * uWS 20.30 drops, at random, a socket upgraded after an await inside res.cork(): its cork()
 * misreads the reallocated socket as an HTTP response flagged "Connection: close" and closes it
 * right after the 101 (uNetworking/uWebSockets#1928; it showed as 1 socket in a few hundred
 * closing with 1006 as soon as it opened). A handshake that really says "Connection: close"
 * makes that misread deterministic, so it tells the two upgrade paths apart: the gateway
 * verifies tokens synchronously and accepts inside uWS's own upgrade callback.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, UWS_LOADS, type Started } from './harness.ts';

/** Sends a raw handshake; resolves with how the socket fared 150 ms after the reply. */
function handshake(port: number, token: string, connection: string): Promise<'open' | 'closed after 101' | (string & {})> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () =>
      socket.write(
        [
          'GET /v1/ws HTTP/1.1',
          'Host: localhost',
          'Upgrade: websocket',
          `Connection: ${connection}`,
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version: 13',
          `Authorization: Bearer ${token}`,
          '',
          '',
        ].join('\r\n'),
      ),
    );
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      timer ??= setTimeout(() => {
        socket.destroy();
        resolve(reply.startsWith('HTTP/1.1 101') ? 'open' : (reply.split('\r\n')[0] ?? ''));
      }, 150);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(reply.startsWith('HTTP/1.1 101') ? 'closed after 101' : `closed: ${reply.split('\r\n')[0]}`);
    });
    socket.on('error', (err) => resolve(`error: ${err.message}`));
  });
}

describe.skipIf(!UWS_LOADS)('uWS upgrade', () => {
  let t: Started;
  afterEach(async () => {
    await t.gateway.close();
  });

  it('keeps every accepted socket open; the handshake that used to trigger uWS’s async-upgrade bug is refused 426', async () => {
    t = await startGateway('uws');
    const token = await t.token('alice');
    const outcomes = [];
    for (let i = 0; i < 20; i++) outcomes.push(await handshake(t.gateway.port, token, i % 2 === 0 ? 'close' : 'Upgrade'));
    // "Connection: close" is no WebSocket handshake (RFC 6455 needs "Upgrade"): both transports
    // answer it 426 as plain HTTP (docs/protocol.md); every real handshake stays open.
    expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'closed: HTTP/1.1 426 Upgrade Required' : 'open')));
  });

  it('an asynchronous token verifier still works (through the corked path), with one warning about that path', async () => {
    t = await startGateway('uws', { verifyToken: async () => ({ user: 'alice', tenant: 't1' }) });
    expect(await handshake(t.gateway.port, 'any', 'Upgrade')).toBe('open');
    expect(await handshake(t.gateway.port, 'any', 'Upgrade')).toBe('open');
    const warnings = t.logger.records.filter((r) => r.level === 'warn' && r.obj['issue'] === 'uNetworking/uWebSockets#1928');
    expect(warnings.map((r) => r.msg)).toEqual([expect.stringContaining('asynchronous token verifier under uWS')]);
  });

  it('a synchronous verifier never warns about the asynchronous path', async () => {
    t = await startGateway('uws');
    expect(await handshake(t.gateway.port, await t.token('alice'), 'Upgrade')).toBe('open');
    expect(t.logger.records.filter((r) => r.obj['issue'] !== undefined)).toEqual([]);
  });
});
