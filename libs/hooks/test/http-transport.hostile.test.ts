import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HookRejectedError, HookUnreachableError } from '@seqline/core';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { createHttpHookTransport, deliverHook } from '../src/index.ts';

const SECRET = 'transport-secret-0123';
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function receiver(mode?: Parameters<typeof startHookReceiver>[0]): Promise<HookReceiver> {
  const r = await startHookReceiver({ secret: SECRET, ...mode });
  open.push(r);
  return r;
}

async function rawServer(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('HTTP hook transport', () => {
  const transport = createHttpHookTransport();

  it('signs the exact body it sends; the receiver verifies it', async () => {
    const r = await receiver();
    const body = JSON.stringify({ type: 'notify', text: 'héllo ✓' });
    const res = await deliverHook(transport, { url: r.url, secret: SECRET, body, timeoutMs: 2000 });
    expect(res.status).toBe(200);
    expect(r.calls).toHaveLength(1);
    expect(r.calls[0]?.rawBody).toBe(body);
    expect(r.calls[0]?.verdict).toEqual({ ok: true });
  });

  it('a call signed with another secret is refused by the receiver (401 → HookRejectedError)', async () => {
    const r = await receiver();
    await expect(
      deliverHook(transport, { url: r.url, secret: 'not-the-right-secret', body: '{}', timeoutMs: 2000 }),
    ).rejects.toBeInstanceOf(HookRejectedError);
    expect(r.accepted()).toHaveLength(0);
  });

  it('a hanging receiver times out as unreachable, within the timeout', async () => {
    const r = await receiver({ mode: { kind: 'hang' } });
    const t0 = Date.now();
    await expect(transport.post({ url: r.url, secret: SECRET, body: '{}', timeoutMs: 200 })).rejects.toBeInstanceOf(HookUnreachableError);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a closed port is unreachable; a 5xx is rejected, not thrown as unreachable', async () => {
    const url = await rawServer((_req, res) => res.writeHead(503).end());
    await expect(deliverHook(transport, { url, secret: undefined, body: '{}', timeoutMs: 1000 })).rejects.toMatchObject({ status: 503 });
    await expect(transport.post({ url: 'http://127.0.0.1:1/', secret: undefined, body: '{}', timeoutMs: 1000 })).rejects.toBeInstanceOf(
      HookUnreachableError,
    );
  });

  it('never follows a redirect (the signed body stays with the configured URL)', async () => {
    const elsewhere = await receiver();
    const url = await rawServer((_req, res) => res.writeHead(307, { location: elsewhere.url }).end());
    await expect(deliverHook(transport, { url, secret: SECRET, body: '{}', timeoutMs: 1000 })).rejects.toMatchObject({ status: 307 });
    expect(elsewhere.calls).toHaveLength(0);
  });

  it('reads an answer only up to its bound', async () => {
    const small = createHttpHookTransport({ maxResponseBytes: 1024 });
    const url = await rawServer((_req, res) => res.writeHead(200).end('x'.repeat(1_000_000)));
    const res = await small.post({ url, secret: undefined, body: '{}', timeoutMs: 2000 });
    expect(res.body.length).toBeLessThanOrEqual(1025);
  });
});
