/**
 * Transport on node:http + the `ws` package: the explicit choice where no uWS binary fits the
 * platform. Same behaviour as the uWS transport, slower.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WsModule, WsNetSocket, WsSocket } from './ws-module.ts';
import { TurnWrites, type HeldWrites } from './turn-writes.ts';
import {
  answerHasContent,
  answerHasLength,
  BODY_METHODS,
  declaredLength,
  framingFault,
  isWebSocketHandshake,
  joinHeaders,
} from './framing.ts';
import {
  CLOSE_CODES,
  STATUS_TEXT,
  type HttpReply,
  type SocketConnection,
  type Transport,
  type TransportHandlers,
  type TransportLimits,
  type TransportRequest,
} from './transport.ts';

const OPEN = 1;

/**
 * Frames of a turn are held by corking the socket under ws (TurnWrites): ws writes each frame
 * into the corked stream, in order, and the one uncork at the end of the turn writes them all
 * in one writev. The corked bytes are in ws's bufferedAmount. A socket destroyed meanwhile
 * (terminate) drops them; ws's close handshake ends the stream, which writes them first.
 */
class WsConnection implements SocketConnection, HeldWrites {
  /** Corked since this turn's first frame, and due in the turn's flush. */
  private holding = false;

  constructor(
    private readonly ws: WsSocket,
    private readonly socket: WsNetSocket,
    private readonly turn: TurnWrites,
  ) {}

  get isOpen(): boolean {
    return this.ws.readyState === OPEN;
  }

  send(text: string): boolean {
    if (!this.isOpen) return false;
    if (!this.holding) {
      this.holding = true;
      this.socket.cork();
      this.turn.hold(this);
    }
    this.ws.send(text);
    if (this.socket.writableLength >= this.turn.flushAt) {
      // Written now; whatever else this turn sends is held again until its end.
      this.socket.uncork();
      this.socket.cork();
    }
    return true;
  }

  flushTurn(): void {
    this.holding = false;
    try {
      this.socket.uncork(); // a no-op once the stream was destroyed or ended
    } catch {
      this.ws.terminate();
    }
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

export function createWsTransport<S>(ws: WsModule, handlers: TransportHandlers<S>, limits: TransportLimits): Transport {
  const wss = new ws.WebSocketServer({
    noServer: true,
    maxPayload: limits.maxPayloadBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });
  const sockets = new Set<WsSocket>();
  const turn = new TurnWrites(limits.maxBackpressureBytes);
  // Host, header size and parse errors are judged as uWS judges them (framing.ts): no answer.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const { request, headers, refused } = readRequest(req);
    if (refused) return void req.socket.destroy();
    const dispatch = (body: Buffer, bodyTooLarge: boolean) => {
      // An unread body is not parsed as a request: the connection closes after the answer.
      const respond = (reply: HttpReply) => writeReply(res, request.method, reply, bodyTooLarge || reply.status === 413);
      handlers.http({ ...request, body, bodyTooLarge }).then(respond, () => respond({ status: 500, body: '' }));
    };
    const declared = declaredLength(headers);
    if (!BODY_METHODS.has(request.method) || declared === 0) {
      req.resume();
      return dispatch(Buffer.alloc(0), false);
    }
    if (declared > limits.maxHttpBodyBytes) return dispatch(Buffer.alloc(0), true); // answered before a byte is read
    readBody(req, limits.maxHttpBodyBytes, dispatch);
  });
  server.on('clientError', (_err: Error, socket: Duplex) => socket.destroy());

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const { request, headers, refused } = readRequest(req);
    if (refused) return void socket.destroy();
    // Not a real handshake (another path, method or version): plain HTTP, as uWS serves it.
    if (!isWebSocketHandshake(request.method, request.path, handlers.wsPath, headers)) {
      handlers.http({ ...request, body: Buffer.alloc(0), bodyTooLarge: false }).then(
        (reply) => writeRaw(socket, request.method, reply),
        () => writeRaw(socket, request.method, { status: 500, body: '' }),
      );
      return;
    }
    Promise.resolve()
      .then(() => handlers.upgrade(request))
      .then(
        (decision) => {
          if (socket.destroyed) return;
          if (!decision.accept) return writeRaw(socket, request.method, decision.reply);
          wss.handleUpgrade(req, socket, head, (client) => accept(client, decision.session));
        },
        () => writeRaw(socket, request.method, { status: 500, body: '' }),
      );
  });

  // ws does not ping on its own. One timer for all sockets: a socket that has not answered
  // the previous ping (no pong) within an interval is dead.
  const unanswered = new WeakSet<WsSocket>();
  const heartbeat = setInterval(
    () => {
      for (const client of sockets) {
        if (unanswered.has(client)) {
          client.terminate();
          continue;
        }
        unanswered.add(client);
        client.ping();
      }
    },
    (limits.idleTimeoutSeconds * 1000) / 2,
  );
  heartbeat.unref();

  function accept(client: WsSocket, session: S): void {
    sockets.add(client);
    client.on('pong', () => unanswered.delete(client));
    client.on('error', () => {
      /* ws closes the socket itself; 'close' follows */
    });
    const listener = handlers.open(new WsConnection(client, client._socket, turn), session);
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
    listen(host, port, options) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        // `reusePort` is in node:net from Node 22.12 (not in the Node 20 typings this builds with).
        const listenOptions = { port, host, ...(options?.reusePort === true && { reusePort: true }) };
        server.listen(listenOptions, () => {
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

/** Headers from the raw lines (node's `req.headers` keeps only the first Authorization or Host). */
function readRequest(req: IncomingMessage): { request: TransportRequest; headers: ReadonlyMap<string, string>; refused: boolean } {
  const lines: Array<[string, string]> = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push([(req.rawHeaders[i] ?? '').toLowerCase(), req.rawHeaders[i + 1] ?? '']);
  const headers = joinHeaders(lines);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const method = req.method ?? 'GET';
  // uWS 20.30 answers HTTP/1.1 only (an HTTP/1.0 request gets no answer there).
  const refused = req.httpVersion !== '1.1' || framingFault({ method, target: url, lines, headers }) !== null;
  return {
    request: {
      method,
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? '' : url.slice(q + 1),
      header: (name) => headers.get(name),
      remoteAddress: req.socket.remoteAddress,
    },
    headers,
    refused,
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
  req.on('error', () => {
    finished = true;
  });
}

function writeReply(res: ServerResponse, method: string, reply: HttpReply, close: boolean): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(reply.status, replyHeaders(reply, close));
  res.end(answerHasContent(method, reply.status) ? reply.body : undefined);
}

/** An answer on a socket node:http has handed over (an Upgrade request); the connection closes. */
function writeRaw(socket: Duplex, method: string, reply: HttpReply): void {
  if (socket.destroyed) return;
  const head = Object.entries(replyHeaders(reply, true))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const body = answerHasContent(method, reply.status) ? reply.body : '';
  socket.end(`HTTP/1.1 ${reply.status} ${STATUS_TEXT[reply.status] ?? 'Unknown'}\r\n${head}\r\n${body}`);
}

function replyHeaders(reply: HttpReply, close: boolean): Record<string, string> {
  const headers: Record<string, string> = { ...reply.headers };
  // HEAD: the length GET would send. 204/304: none (RFC 9110 §8.6).
  if (answerHasLength(reply.status)) headers['content-length'] = String(Buffer.byteLength(reply.body));
  if (close) headers['connection'] = 'close';
  return headers;
}
