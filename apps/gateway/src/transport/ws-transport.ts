/**
 * Transport on node:http + the `ws` package: the explicit choice where no uWS binary fits the
 * platform. Same behaviour as the uWS transport, slower.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WsModule, WsSocket } from './ws-module.ts';
import {
  CLOSE_CODES, STATUS_TEXT, type HttpReply, type SocketConnection, type Transport, type TransportHandlers,
  type TransportLimits, type TransportRequest,
} from './transport.ts';

const OPEN = 1;

class WsConnection implements SocketConnection {
  constructor(private readonly ws: WsSocket) {}

  get isOpen(): boolean {
    return this.ws.readyState === OPEN;
  }

  send(text: string): boolean {
    if (!this.isOpen) return false;
    this.ws.send(text);
    return true;
  }

  bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  close(code: number, reason: string): void {
    if (this.isOpen) this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate(); // no-op once closed
  }
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export function createWsTransport<S>(ws: WsModule, handlers: TransportHandlers<S>, limits: TransportLimits): Transport {
  const wss = new ws.WebSocketServer({ noServer: true, maxPayload: limits.maxPayloadBytes, perMessageDeflate: false, clientTracking: false });
  const sockets = new Set<WsSocket>();
  const server = createServer((req, res) => {
    const request = readRequest(req);
    const dispatch = (body: Buffer, bodyTooLarge: boolean) => {
      handlers.http({ ...request, body, bodyTooLarge }).then(
        (reply) => writeReply(res, reply),
        () => writeReply(res, { status: 500, body: '' }),
      );
    };
    if (!BODY_METHODS.has(request.method)) {
      req.resume();
      return dispatch(Buffer.alloc(0), false);
    }
    readBody(req, limits.maxHttpBodyBytes, dispatch);
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const request = readRequest(req);
    if (request.path !== handlers.wsPath) return rejectUpgrade(socket, { status: 404, body: '' });
    Promise.resolve().then(() => handlers.upgrade(request)).then(
      (decision) => {
        if (socket.destroyed) return;
        if (!decision.accept) return rejectUpgrade(socket, decision.reply);
        wss.handleUpgrade(req, socket, head, (client) => accept(client, decision.session));
      },
      () => rejectUpgrade(socket, { status: 500, body: '' }),
    );
  });

  // ws does not ping on its own. One timer for all sockets: a socket that has not answered
  // the previous ping (no pong) within an interval is dead.
  const unanswered = new WeakSet<WsSocket>();
  const heartbeat = setInterval(() => {
    for (const client of sockets) {
      if (unanswered.has(client)) {
        client.terminate();
        continue;
      }
      unanswered.add(client);
      client.ping();
    }
  }, (limits.idleTimeoutSeconds * 1000) / 2);
  heartbeat.unref();

  function accept(client: WsSocket, session: S): void {
    sockets.add(client);
    client.on('pong', () => unanswered.delete(client));
    client.on('error', () => { /* ws closes the socket itself; 'close' follows */ });
    const listener = handlers.open(new WsConnection(client), session);
    client.on('message', (data, isBinary) => {
      unanswered.delete(client); // any traffic proves the peer alive
      listener.message(Array.isArray(data) ? Buffer.concat(data) : data, isBinary);
    });
    client.on('close', (code) => {
      sockets.delete(client);
      listener.closed(code);
    });
  }

  return {
    name: 'ws',
    native: false,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : port);
        });
      });
    },
    stopListening() {
      if (server.listening) server.close();
    },
    async close() {
      this.stopListening();
      clearInterval(heartbeat);
      for (const client of [...sockets]) client.close(CLOSE_CODES.goingAway, 'server shutting down');
      // Give close frames a moment to flush, then drop whatever is left.
      await new Promise((resolve) => setTimeout(resolve, 50).unref());
      for (const client of [...sockets]) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

function readRequest(req: IncomingMessage): TransportRequest {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    path: q < 0 ? url : url.slice(0, q),
    query: q < 0 ? '' : url.slice(q + 1),
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

function readBody(req: IncomingMessage, maxBytes: number, done: (body: Buffer, tooLarge: boolean) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.byteLength;
    if (size > maxBytes) {
      finished = true;
      done(Buffer.alloc(0), true);
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (finished) return;
    finished = true;
    done(Buffer.concat(chunks), false);
  });
  req.on('error', () => { finished = true; });
}

function writeReply(res: ServerResponse, reply: HttpReply): void {
  if (res.headersSent || res.destroyed) return;
  // A 413 is sent before the body was read: close so the unread rest is not parsed as a request.
  const body = Buffer.from(reply.body);
  const headers = { ...reply.headers, 'content-length': String(body.byteLength), ...(reply.status === 413 ? { connection: 'close' } : {}) };
  res.writeHead(reply.status, headers);
  res.end(body);
}

function rejectUpgrade(socket: Duplex, reply: HttpReply): void {
  if (socket.destroyed) return;
  const body = Buffer.from(reply.body);
  const headers = Object.entries({ ...reply.headers, 'content-length': String(body.byteLength), connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(`HTTP/1.1 ${reply.status} ${STATUS_TEXT[reply.status] ?? 'Unknown'}\r\n${headers}\r\n${body.toString()}`);
}
