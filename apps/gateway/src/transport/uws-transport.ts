/**
 * uWebSockets.js transport (default, benchmarked). uWS rules followed here: request objects are
 * valid only synchronously (read everything first), an HttpResponse used after an `await` needs
 * `onAborted` set beforehand, and writes after the first tick go inside `cork`.
 */
import type { HttpResponse, TemplatedApp, WebSocket, us_listen_socket } from 'uWebSockets.js';
import type { Logger } from '@seqline/core';
import type { UwsModule } from './uws-loader.ts';
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
  statusLine,
  type ConnectionListener,
  type HttpReply,
  type Transport,
  type TransportHandlers,
  type TransportLimits,
  type TransportRequest,
  type UpgradeDecision,
} from './transport.ts';
import { TurnWrites } from './turn-writes.ts';
import { UwsConnection } from './uws-connection.ts';

interface SocketData<S> {
  session: S;
  conn?: UwsConnection;
  listener?: ConnectionListener;
  /** Set when the socket closed inside `open` (before a listener existed). */
  closedWith?: number;
}

export function createUwsTransport<S>(uws: UwsModule, handlers: TransportHandlers<S>, limits: TransportLimits, logger: Logger): Transport {
  const app: TemplatedApp = uws.App();
  const sockets = new Set<WebSocket<SocketData<S>>>();
  const turn = new TurnWrites(limits.maxBackpressureBytes);
  let listenSocket: us_listen_socket | null = null;
  let warnedAsync = false;

  app.ws<SocketData<S>>(handlers.wsPath, {
    compression: uws.DISABLED,
    maxPayloadLength: limits.maxPayloadBytes,
    // uWS drops frames above this; the gateway closes the socket below it, so none is lost silently.
    maxBackpressure: limits.maxBackpressureBytes * 2,
    closeOnBackpressureLimit: 0,
    idleTimeout: limits.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    upgrade(res, req, context) {
      const { request, headers, refused } = readRequest(req, res);
      if (refused) return void res.close();
      // uWS routes here on a 24-character key alone: anything short of a real handshake is HTTP.
      if (!isWebSocketHandshake(request.method, request.path, handlers.wsPath, headers)) return serveHttp(res, request, headers);
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const decide = (decision: UpgradeDecision<S>) => {
        if (decision.accept) res.upgrade<SocketData<S>>({ session: decision.session }, key, protocol, extensions, context);
        else writeReply(res, 'GET', decision.reply, true);
      };
      let decision: UpgradeDecision<S> | Promise<UpgradeDecision<S>>;
      try {
        decision = handlers.upgrade(request);
      } catch {
        return writeReply(res, 'GET', { status: 500, body: '' }, true);
      }
      // Decided now: answered inside this callback, which uWS has corked. uWS 20.30 drops a
      // socket upgraded later inside res.cork() at random (its cork() misreads the reallocated
      // socket as an HTTP response to close: uNetworking/uWebSockets#1928), so an async
      // decision — a custom asynchronous token verifier — is exposed to that bug.
      if (!(decision instanceof Promise)) return decide(decision);
      if (!warnedAsync) {
        warnedAsync = true;
        logger.warn(
          { issue: 'uNetworking/uWebSockets#1928' },
          'asynchronous token verifier under uWS: a few sockets in a thousand may close right after their upgrade; use a synchronous verifier, or transport "ws" (docs/decisions.md)',
        );
      }
      const state = { aborted: false };
      res.onAborted(() => {
        state.aborted = true;
      });
      decision.then(
        (d) => {
          if (!state.aborted) res.cork(() => decide(d));
        },
        () => {
          if (!state.aborted) res.cork(() => writeReply(res, 'GET', { status: 500, body: '' }, true));
        },
      );
    },
    open(ws) {
      sockets.add(ws);
      const data = ws.getUserData();
      data.conn = new UwsConnection(ws, turn);
      const listener = handlers.open(data.conn, data.session);
      // end() runs the close handler synchronously: a socket closed during open is reported now.
      if (data.closedWith !== undefined) listener.closed(data.closedWith);
      else data.listener = listener;
    },
    message(ws, message, isBinary) {
      ws.getUserData().listener?.message(message, isBinary);
    },
    close(ws, code) {
      sockets.delete(ws);
      const data = ws.getUserData();
      data.conn?.gone();
      if (data.listener) data.listener.closed(code);
      else data.closedWith = code;
    },
  });

  app.any('/*', (res, req) => {
    const { request, headers, refused } = readRequest(req, res);
    if (refused) return void res.close(); // see framing.ts: no answer, nothing after it parsed
    serveHttp(res, request, headers);
  });

  function serveHttp(res: HttpResponse, request: TransportRequest, headers: ReadonlyMap<string, string>): void {
    const state = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    const dispatch = (body: Buffer, bodyTooLarge: boolean) => {
      const respond = (reply: HttpReply) => {
        // An unread body is not parsed as a request: the connection closes after the answer.
        if (!state.aborted) res.cork(() => writeReply(res, request.method, reply, bodyTooLarge || reply.status === 413));
      };
      handlers.http({ ...request, body, bodyTooLarge }).then(respond, () => respond({ status: 500, body: '' }));
    };
    const declared = declaredLength(headers);
    if (!BODY_METHODS.has(request.method) || declared === 0) return dispatch(Buffer.alloc(0), false);
    if (declared > limits.maxHttpBodyBytes) return dispatch(Buffer.alloc(0), true); // answered before a byte is read
    readBody(res, limits.maxHttpBodyBytes, dispatch);
  }

  return {
    name: 'uws',
    native: true,
    // uSockets sets SO_REUSEPORT on every listen socket on Linux: threads share the port as is.
    listen(host, port) {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) return reject(new Error(`uWS could not listen on ${host}:${port}`));
          listenSocket = socket;
          resolve(uws.us_socket_local_port(socket));
        });
      });
    },
    stopListening() {
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = null;
    },
    async close() {
      this.stopListening();
      for (const ws of [...sockets]) {
        const conn = ws.getUserData().conn;
        if (conn) conn.close(CLOSE_CODES.goingAway, 'server shutting down');
        else ws.end(CLOSE_CODES.goingAway, 'server shutting down');
      }
      // Let close frames flush before the hard close below.
      await new Promise((resolve) => setTimeout(resolve, 50).unref());
      // The native App has close() (not in the bundled typings): it also drops idle keep-alive HTTP sockets.
      const closable = app as TemplatedApp & { close?: () => void };
      if (typeof closable.close === 'function') closable.close();
    },
  };
}

type UwsRequest = {
  getMethod(): string;
  getCaseSensitiveMethod?(): string;
  getUrl(): string;
  getQuery(): string | undefined;
  forEach(cb: (k: string, v: string) => void): void;
};

/** Reads everything synchronously (uWS invalidates `req` after the callback) and checks its framing. */
function readRequest(
  req: UwsRequest,
  res: HttpResponse,
): { request: TransportRequest; headers: ReadonlyMap<string, string>; refused: boolean } {
  const lines: Array<[string, string]> = [];
  req.forEach((key, value) => {
    lines.push([key, value]);
  });
  const headers = joinHeaders(lines);
  // uWS lower-cases the method; only the upper-case spelling is a method (node refuses "get").
  const method = req.getCaseSensitiveMethod?.() ?? req.getMethod().toUpperCase();
  const path = req.getUrl();
  const query = req.getQuery() ?? '';
  const refused = framingFault({ method, target: query === '' ? path : `${path}?${query}`, lines, headers }) !== null;
  const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString('latin1');
  return { request: { method, path, query, header: (name) => headers.get(name), remoteAddress }, headers, refused };
}

/** Collects the body up to `maxBytes`; beyond that stops collecting and reports it too large. */
function readBody(res: HttpResponse, maxBytes: number, done: (body: Buffer, tooLarge: boolean) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  res.onData((chunk, isLast) => {
    if (finished) return;
    size += chunk.byteLength;
    if (size > maxBytes) {
      finished = true;
      return done(Buffer.alloc(0), true);
    }
    chunks.push(Buffer.from(new Uint8Array(chunk))); // copy: uWS reuses chunk memory
    if (isLast) {
      finished = true;
      done(Buffer.concat(chunks), false);
    }
  });
}

/**
 * `close` ends the connection after the answer. A HEAD answer says the length GET would send
 * but carries no content; uWS's `end` would write it, and `endWithoutBody(length)` aborts the
 * process in 20.30, so the length is written as a header. HEAD never needs `close` (framing.ts
 * refuses HEAD with content).
 */
function writeReply(res: HttpResponse, method: string, reply: HttpReply, close: boolean): void {
  res.writeStatus(statusLine(reply.status));
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.writeHeader(name, value);
  if (answerHasContent(method, reply.status)) return void res.end(reply.body, close);
  if (answerHasLength(reply.status)) res.writeHeader('content-length', String(Buffer.byteLength(reply.body)));
  res.endWithoutBody();
}
