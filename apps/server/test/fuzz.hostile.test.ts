/**
 * Fuzz run against the embedded server: 20 000 random frames over 4 sockets of 3 users. Every
 * reply must carry a protocol error code (or be ok), the server must stay healthy, and a normal
 * user chatting meanwhile must end with exactly what was sent: no more, no less, byte for byte.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import { appinfo, SECRET, startTestServer, TestClient, type TestServer } from './harness.ts';
import { fuzzFrames, type Frame } from './hostile/frame-fuzz.ts';

const FRAMES = 20_000;
const SOCKETS = 4;
const REPLY_TIMEOUT_MS = 5_000;
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

interface Reply {
  id?: unknown;
  ok?: unknown;
  op?: unknown;
  error?: { code?: unknown };
}

/**
 * One fuzzing socket: sends a frame, waits for its reply; reconnects when the server closes it.
 * A socket that spends its allowance of refused frames is closed and its user held off for a
 * while (docs/protocol.md), so each reconnect comes back as a new user of the fuzzing world.
 */
class FuzzSocket {
  private ws: WebSocket | null = null;
  private waiter: ((r: Reply) => void) | null = null;
  reconnects = 0;
  constructor(
    private readonly url: string,
    private readonly name: string,
  ) {}

  private async open(): Promise<WebSocket> {
    const token = await issueToken({ secret: SECRET, user: `${this.name}-${this.reconnects}`, tenant: 'default', ttlSeconds: 3600 });
    const ws = new WebSocket(this.url, { headers: { authorization: `Bearer ${token}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('message', (data: WebSocket.RawData) => {
      const msg = JSON.parse(String(data)) as Reply;
      if (msg.op === 'push' || msg.op === 'group.push') return;
      const w = this.waiter;
      this.waiter = null;
      w?.(msg);
    });
    ws.on('close', () => {
      if (this.ws === ws) this.ws = null;
    });
    return ws;
  }

  async exchange(frame: Frame): Promise<Reply | 'closed'> {
    if (this.ws === null || this.ws.readyState !== WebSocket.OPEN) {
      this.reconnects++;
      this.ws = await this.open();
    }
    const ws = this.ws;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`no reply within ${REPLY_TIMEOUT_MS} ms to ${frame.kind === 'text' ? frame.data.slice(0, 200) : 'a binary frame'}`),
          ),
        REPLY_TIMEOUT_MS,
      );
      const done = (r: Reply | 'closed') => {
        clearTimeout(timer);
        ws.off('close', onClose);
        resolve(r);
      };
      // A binary frame may be answered by a close instead of a reply (policy): both are fine.
      const onClose = () => {
        this.waiter = null;
        done('closed');
      };
      ws.once('close', onClose);
      this.waiter = done;
      ws.send(frame.data, { binary: frame.kind === 'binary' });
    });
  }

  close(): void {
    this.ws?.close();
  }
}

describe('fuzz', () => {
  it(`${FRAMES} random frames: typed replies, a healthy server, a normal user's inbox intact`, async () => {
    const sockets = Array.from({ length: SOCKETS }, (_, i) => new FuzzSocket(s.url, `fz${i + 1}`));
    const perSocket = FRAMES / SOCKETS;
    const codes = new Map<string, number>();
    let oks = 0;
    let closes = 0;

    // A normal user chats with a friend throughout.
    const [normal, friend] = [await TestClient.connect(s.url, 'normal-user-7f3a'), await TestClient.connect(s.url, 'friend-user-7f3a')];
    const sent: Array<{ appinfo: string; body: unknown }> = [];
    let fuzzing = true;
    const chat = (async () => {
      for (let k = 0; fuzzing || k < 20; k++) {
        const a = appinfo();
        const body = { text: `message ${k}`, n: k, nested: { ok: [k, 'ü', null] } };
        await normal.ok('send', { appinfo: a, to: { user: friend.user }, type: 'text', body });
        sent.push({ appinfo: a, body });
        await new Promise((r) => setTimeout(r, 10));
      }
    })();

    const started = Date.now();
    await Promise.all(
      sockets.map(async (socket, i) => {
        for (const frame of fuzzFrames(perSocket, SEED + i, 1)) {
          const reply = await socket.exchange(frame);
          if (reply === 'closed') {
            closes++;
            continue;
          }
          if (frame.kind === 'text' && frame.id !== null) expect(reply.id, frame.data.slice(0, 200)).toBe(frame.id);
          if (reply.ok === true) {
            oks++;
            continue;
          }
          expect(reply.ok, frame.kind === 'text' ? frame.data.slice(0, 200) : 'binary').toBe(false);
          const code = String(reply.error?.code);
          expect(
            ERROR_CODES as readonly string[],
            `untyped reply to ${frame.kind === 'text' ? frame.data.slice(0, 200) : 'binary'}`,
          ).toContain(code);
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }
      }),
    );
    fuzzing = false;
    await chat;
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `fuzz: ${FRAMES} frames in ${seconds.toFixed(1)} s over ${SOCKETS} sockets; ok ${oks}, closed ${closes}, reconnects ${sockets.reduce((n, x) => n + x.reconnects, 0)}; errors ${JSON.stringify(Object.fromEntries(codes))}`,
    );
    for (const socket of sockets) socket.close();

    // Healthy: /healthz answers and a new socket is served.
    expect((await fetch(`http://127.0.0.1:${s.port}/healthz`)).status).toBe(200);
    const after = await TestClient.connect(s.url, 'late-comer-7f3a');
    expect(await after.ok('sync', { maxSeq: 0 })).toMatchObject({ ok: true, entries: [] });
    after.close();

    // The normal user's friend holds exactly what was sent, in order, bodies intact; nothing else.
    const inbox = await friend.syncAll();
    expect(inbox.map((e) => ({ appinfo: e.appinfo, body: e.body, from: e.from, kind: e.kind }))).toEqual(
      sent.map((m) => ({ appinfo: m.appinfo, body: m.body, from: normal.user, kind: 'msg' })),
    );
    const own = (await normal.syncAll()).filter((e) => e.kind === 'msg');
    expect(own.map((e) => e.appinfo)).toEqual(sent.map((m) => m.appinfo));
    normal.close();
    friend.close();
  }, 180_000);
});
