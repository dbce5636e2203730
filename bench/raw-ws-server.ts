/**
 * The raw limit for the WebSocket benches: a bare uWebSockets.js server (same native binary and
 * socket settings as the gateway) with no auth, no storage and no queue. Run as a child process
 * by bench/support.ts; prints "raw listening" when ready.
 *
 * Frames (JSON, same envelope as the protocol):
 *  - `setReply {tail}`: remembers a canned reply body (a real sync reply without its id).
 *  - `echo`: answers `{"id":N,<tail>` — the same bytes a real sync answer has, without the read.
 *  - `send {appinfo, to: {user}, type, body}`: acks, then pushes a copy to the sender and to
 *    the recipient, like the real 1:1 path but straight from memory.
 */
import { loadNativeUws } from '@seqline/gateway';
import type { WebSocket } from 'uWebSockets.js';

interface SocketData {
  user: string;
}

const loaded = loadNativeUws();
if (!loaded.ok) {
  process.stderr.write(`raw server: ${loaded.reason}\n`);
  process.exit(1);
}
const uws = loaded.uws;
const port = Number(process.env['PORT'] ?? 0);
const sockets = new Map<string, WebSocket<SocketData>>();
const heads = new Map<string, number>();
let cannedTail = '"ok":true}';

interface Frame {
  id?: number;
  op?: string;
  tail?: string;
  appinfo?: string;
  to?: { user?: string };
  type?: string;
  body?: unknown;
}

function pushCopy(owner: string, peer: string, from: string, frame: Frame, sendTime: number): number {
  const prevSeq = heads.get(owner) ?? 0;
  const seq = prevSeq + 1;
  heads.set(owner, seq);
  const entry = {
    seq,
    kind: 'msg',
    appinfo: frame.appinfo,
    conv: { type: 'user', id: peer },
    from,
    sendTime,
    type: frame.type,
    body: frame.body,
  };
  sockets.get(owner)?.send(JSON.stringify({ op: 'push', prevSeq, entries: [entry] }));
  return seq;
}

uws
  .App()
  .ws<SocketData>('/raw', {
    compression: uws.DISABLED,
    maxPayloadLength: 16 * 1024 * 1024,
    maxBackpressure: 64 * 1024 * 1024,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade(res, req, context) {
      const user = new URLSearchParams(req.getQuery() ?? '').get('user') ?? 'anonymous';
      res.upgrade<SocketData>(
        { user },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open(ws) {
      sockets.set(ws.getUserData().user, ws);
    },
    close(ws) {
      const user = ws.getUserData().user;
      if (sockets.get(user) === ws) sockets.delete(user);
    },
    message(ws, message) {
      const frame = JSON.parse(Buffer.from(message).toString('utf8')) as Frame;
      const id = frame.id ?? null;
      if (frame.op === 'setReply' && typeof frame.tail === 'string') {
        cannedTail = frame.tail;
        ws.send(JSON.stringify({ id, ok: true }));
      } else if (frame.op === 'echo') {
        ws.send(`{"id":${id},${cannedTail}`);
      } else if (frame.op === 'send') {
        const from = ws.getUserData().user;
        const to = frame.to?.user ?? from;
        const sendTime = Date.now();
        ws.cork(() => {
          const seq = pushCopy(from, to, from, frame, sendTime);
          ws.send(JSON.stringify({ id, ok: true, seq, sendTime, duplicate: false }));
        });
        pushCopy(to, from, from, frame, sendTime);
      } else {
        ws.send(JSON.stringify({ id, ok: false, error: { code: 'BAD_REQUEST', message: 'raw server: unknown op' } }));
      }
    },
  })
  .listen('127.0.0.1', port, (listenSocket) => {
    if (!listenSocket) {
      process.stderr.write(`raw server: cannot listen on ${port}\n`);
      process.exit(1);
    }
    process.stdout.write(`raw listening ${port}\n`);
  });

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
