/**
 * Both transports hold the frames a socket is sent in one event-loop turn and write them
 * together at its end (transport/turn-writes.ts): in order, before a close frame, never after a
 * terminate, and counted in bufferedAmount. Under `ws` the write is counted on the server's
 * net.Socket; uWS writes in native code, where only what the client receives can be checked.
 */
import { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport } from '../src/transport/select.ts';
import type { SocketConnection, Transport, TransportName } from '../src/transport/transport.ts';
import { loadWs, type WsClient } from '../src/transport/ws-module.ts';
import { eventually, memoryLogger, TRANSPORTS } from './harness.ts';

const LIMITS = { maxPayloadBytes: 1024 * 1024, maxHttpBodyBytes: 1024, maxBackpressureBytes: 1024 * 1024, idleTimeoutSeconds: 60 };

interface Rig {
  transport: Transport;
  port: number;
  /** The server side of each accepted socket, in accept order. */
  conns: SocketConnection[];
}

async function startTransport(name: TransportName): Promise<Rig> {
  const conns: SocketConnection[] = [];
  const transport = createTransport<null>(
    { transport: name, logger: memoryLogger() },
    {
      wsPath: '/ws',
      upgrade: () => ({ accept: true, session: null }),
      open(conn) {
        conns.push(conn);
        return { message: () => undefined, closed: () => undefined };
      },
      http: () => Promise.resolve({ status: 404, body: '' }),
    },
    LIMITS,
  );
  const port = await transport.listen('127.0.0.1', 0);
  return { transport, port, conns };
}

interface Peer {
  socket: WsClient;
  frames: string[];
  closed: Promise<number>;
}

async function connect(rig: Rig): Promise<{ peer: Peer; conn: SocketConnection }> {
  const { WebSocket } = loadWs();
  const index = rig.conns.length;
  const socket = new WebSocket(`ws://127.0.0.1:${rig.port}/ws`);
  const frames: string[] = [];
  socket.on('message', (data) => frames.push(data.toString()));
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  await eventually(() => rig.conns.length > index);
  return { peer: { socket, frames, closed }, conn: rig.conns[index] as SocketConnection };
}

/** Counts the writes handed to the server's net.Sockets on `port` (one each: a write or a writev). */
function spyServerWrites(port: number): { writes: number[]; restore(): void } {
  type Writer = (this: Socket, ...args: unknown[]) => unknown;
  const proto = Socket.prototype as unknown as { _write: Writer; _writev: Writer };
  const { _write: write, _writev: writev } = proto;
  const writes: number[] = [];
  proto._write = function (this: Socket, ...args: unknown[]) {
    if (this.localPort === port) writes.push(1);
    return write.apply(this, args);
  };
  proto._writev = function (this: Socket, ...args: unknown[]) {
    if (this.localPort === port) writes.push((args[0] as unknown[]).length);
    return writev.apply(this, args);
  };
  return {
    writes,
    restore() {
      proto._write = write;
      proto._writev = writev;
    },
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe.each(TRANSPORTS)('frames of one turn (%s)', (name) => {
  let rig: Rig;
  let restore = () => {};
  afterEach(async () => {
    restore();
    restore = () => {};
    await rig.transport.close();
  });

  it('reach the client in the order sent; a frame past the turn goes in a later write', async () => {
    rig = await startTransport(name);
    const { peer, conn } = await connect(rig);
    const spy = spyServerWrites(rig.port);
    restore = spy.restore;
    const sent = Array.from({ length: 50 }, (_, i) => JSON.stringify({ op: 'push', prevSeq: i }));
    for (const text of sent) expect(conn.send(text)).toBe(true);
    expect(spy.writes).toEqual([]); // held until the turn ends
    await eventually(() => peer.frames.length === sent.length);
    expect(peer.frames).toEqual(sent);
    if (name === 'ws') expect(spy.writes).toEqual([2 * sent.length]); // one writev: a header and a payload per frame
    expect(conn.send('later')).toBe(true);
    await eventually(() => peer.frames.length === sent.length + 1);
    expect(peer.frames.at(-1)).toBe('later');
    if (name === 'ws') expect(spy.writes).toEqual([2 * sent.length, 2]);
  });

  it('count in bufferedAmount while held', async () => {
    rig = await startTransport(name);
    const { peer, conn } = await connect(rig);
    const text = 'x'.repeat(1000);
    for (let i = 0; i < 10; i++) conn.send(text);
    expect(conn.bufferedAmount()).toBeGreaterThanOrEqual(10 * text.length);
    await eventually(() => peer.frames.length === 10);
    await eventually(() => conn.bufferedAmount() === 0);
  });

  it('are written at once past a quarter of the backpressure bound (at most 64 KiB), still in order', async () => {
    rig = await startTransport(name);
    const { peer, conn } = await connect(rig);
    const spy = spyServerWrites(rig.port);
    restore = spy.restore;
    const sent = Array.from({ length: 6 }, (_, i) => `${i}`.repeat(40 * 1024));
    for (const text of sent) conn.send(text);
    // Every 2 frames reach 80 KiB: written in this very turn, so held bytes never near the bound.
    if (name === 'ws') expect(spy.writes.length).toBeGreaterThanOrEqual(3);
    await eventually(() => peer.frames.length === sent.length);
    expect(peer.frames).toEqual(sent);
  });

  it('go out before a close frame sent in the same turn', async () => {
    rig = await startTransport(name);
    const { peer, conn } = await connect(rig);
    const sent = ['a', 'b', 'c'];
    for (const text of sent) conn.send(text);
    conn.close(4000, 'done');
    expect(conn.send('after close')).toBe(false);
    expect(await peer.closed).toBe(4000);
    expect(peer.frames).toEqual(sent);
  });

  it('are dropped by a terminate in the same turn', async () => {
    rig = await startTransport(name);
    const { peer, conn } = await connect(rig);
    conn.send('held');
    conn.terminate();
    await nextTurn();
    expect(await peer.closed).toBe(1006);
    expect(peer.frames).toEqual([]);
  });

  it('of one socket never wait for, nor go to, another socket', async () => {
    rig = await startTransport(name);
    const a = await connect(rig);
    const b = await connect(rig);
    a.conn.send('to a');
    b.conn.send('to b');
    a.conn.terminate(); // a's frame is dropped; b's still goes
    await eventually(() => b.peer.frames.length === 1);
    expect(b.peer.frames).toEqual(['to b']);
    expect(await a.peer.closed).toBe(1006);
    expect(a.peer.frames).toEqual([]);
  });
});
