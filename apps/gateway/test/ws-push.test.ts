import { afterEach, describe, expect, it } from 'vitest';
import type { Entry } from '@seqline/core';
import { sampleEntry } from './fake-messaging.ts';
import { loadWs } from '../src/transport/ws-module.ts';
import { eventually, startGateway, TestClient, TRANSPORTS, upgradeStatus, type Started } from './harness.ts';

const alice = { tenant: 't1', user: 'alice' };

describe.each(TRANSPORTS)('push, backpressure and shutdown (%s)', (transport) => {
  let t: Started;
  afterEach(async () => {
    await t.gateway.close();
  });

  it('delivers pushes for the caller’s inbox to each of their sockets, as wire entries', async () => {
    t = await startGateway(transport);
    const [phone, laptop, bob] = await Promise.all([t.connect('alice'), t.connect('alice'), t.connect('bob')]);
    await eventually(() => t.messaging.subscriberCount() === 3);
    const leaky = { ...sampleEntry, seq: 43, storageFlag: true } as unknown as Entry;
    t.messaging.push(alice, 42, [leaky]);
    const expected = { op: 'push', prevSeq: 42, entries: [{ ...sampleEntry, seq: 43 }] };
    expect(await phone.nextPush()).toEqual(expected);
    expect(await laptop.nextPush()).toEqual(expected);
    // bob got nothing: his next frame is the reply to his own request.
    expect(await bob.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    await phone.close();
    await eventually(() => t.messaging.subscriberCount(alice) === 1);
    t.messaging.push(alice, 43, [{ ...sampleEntry, seq: 44 }]);
    expect((await laptop.nextPush())['prevSeq']).toBe(43);
    const metrics = await t.gateway.metrics.metrics();
    expect(metrics).toMatch(/seqline_gateway_pushes_total 3/);
  });

  it('unsubscribes when the socket closes, whichever side closes it', async () => {
    t = await startGateway(transport, { maxConsecutiveBadFrames: 0, holdMs: 0 }); // reconnects at once below
    const c = await t.connect();
    await eventually(() => t.messaging.subscriberCount(alice) === 1);
    c.sendRaw('bad'); // server closes
    expect((await c.closed).code).toBe(1008);
    await eventually(() => t.messaging.subscriberCount(alice) === 0 && t.gateway.connectionCount() === 0);
    const d = await t.connect();
    d.socket.terminate(); // client vanishes without a close frame
    await eventually(() => t.messaging.subscriberCount(alice) === 0 && t.gateway.connectionCount() === 0);
    // Both ends are counted by the close code the gateway saw: 1006 is "no close frame".
    const closes = await t.gateway.metrics.getSingleMetric('seqline_gateway_connections_closed_total')?.get();
    expect(Object.fromEntries((closes?.values ?? []).map((v) => [v.labels['code'], v.value]))).toEqual({ 1008: 1, 1006: 1 });
  });

  it('a failing push subscription closes the socket (1011) and leaves no session behind', async () => {
    t = await startGateway(transport);
    t.messaging.subscribe = () => {
      throw new Error('bus down');
    };
    const c = await t.connect();
    expect((await c.closed).code).toBe(1011);
    await eventually(() => t.gateway.connectionCount() === 0);
    const gauge = t.gateway.metrics.getSingleMetric('seqline_gateway_connections');
    let open = -1;
    for (let i = 0; i < 100 && open !== 0; i++) {
      open = (await gauge?.get())?.values[0]?.value ?? -1;
      if (open !== 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(open).toBe(0);
    expect(t.logger.records.some((r) => r.level === 'error' && String(r.obj['err']).includes('bus down'))).toBe(true);
  });

  it('closes a socket that does not read once its buffer passes maxBackpressureBytes', async () => {
    t = await startGateway(transport, { maxBackpressureBytes: 256 * 1024 });
    const slow = await t.connect();
    const fast = await t.connect('bob');
    await eventually(() => t.messaging.subscriberCount() === 2);
    slow.socket.pause(); // stop reading: kernel buffers fill, then the server's
    const big = { ...sampleEntry, body: { text: 'p'.repeat(60_000) } };
    let seq = 0;
    for (let i = 0; i < 2000 && t.gateway.connectionCount() === 2; i++) {
      t.messaging.push(alice, seq, [{ ...big, seq: ++seq }]);
      if (i % 20 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    await eventually(() => t.gateway.connectionCount() === 1);
    expect(t.messaging.subscriberCount(alice)).toBe(0);
    expect(await t.gateway.metrics.metrics()).toMatch(/seqline_gateway_forced_closes_total\{reason="backpressure"\} 1/);
    expect(await fast.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    slow.socket.resume();
    expect((await slow.closed).code).toBeGreaterThanOrEqual(1000);
  });

  it('close(): stops accepting, answers in-flight requests, then closes sockets with 1001', async () => {
    t = await startGateway(transport);
    const c = await t.connect();
    const release = t.messaging.block('sync');
    const pending = c.request('sync', { maxSeq: 0 });
    await eventually(() => t.messaging.callsOf('sync').length === 1);
    const closing = t.gateway.close();
    // New connections are refused while draining.
    await expect(upgradeStatus(t.wsUrl(`token=${await t.token()}`))).rejects.toThrow();
    // A new request on the open socket is told to go elsewhere.
    expect(await c.request('history', {})).toMatchObject({ ok: false, error: { code: 'OVERLOADED' } });
    release();
    expect(await pending).toMatchObject({ ok: true });
    await closing;
    expect((await c.closed).code).toBe(1001);
    expect(t.messaging.subscriberCount()).toBe(0);
    await t.gateway.close(); // idempotent
  });

  it('close() does not wait forever for a stuck request', async () => {
    t = await startGateway(transport, { shutdownGraceMs: 100 });
    const c = await t.connect();
    t.messaging.block('sync');
    void c.request('sync', { maxSeq: 0 });
    await eventually(() => t.messaging.callsOf('sync').length === 1);
    const started = Date.now();
    await t.gateway.close();
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await c.closed).code).toBe(1001);
    expect(t.logger.records.some((r) => r.level === 'warn' && r.obj['inFlight'] === 1)).toBe(true);
  });

  it('drops a socket that stops answering pings', async () => {
    t = await startGateway(transport, { idleTimeoutSeconds: 8 });
    const { WebSocket } = loadWs();
    // autoPong off: the client never answers pings, like a peer that vanished without FIN.
    const silent = new WebSocket(t.wsUrl(`token=${await t.token()}`), { autoPong: false });
    const code = await new Promise<number>((resolve) => silent.on('close', (c) => resolve(c)));
    expect(code).toBeGreaterThanOrEqual(1000);
    await eventually(() => t.gateway.connectionCount() === 0);
  }, 40_000);

  it('many concurrent clients each get their own replies', async () => {
    t = await startGateway(transport, { rateLimit: false });
    const clients = await Promise.all(Array.from({ length: 50 }, (_, i) => t.connect(`u${i}`)));
    const replies = await Promise.all(clients.flatMap((c) => [c.request('read', { seqs: [1] }), c.request('recall', { appinfo: 'a' })]));
    expect(replies.every((r) => r.ok)).toBe(true);
    expect(t.gateway.connectionCount()).toBe(50);
    const metrics = await t.gateway.metrics.metrics();
    expect(metrics).toMatch(/seqline_gateway_connections 50/);
    await Promise.all(clients.map((c: TestClient) => c.close()));
    await eventually(() => t.gateway.connectionCount() === 0);
  });
});
