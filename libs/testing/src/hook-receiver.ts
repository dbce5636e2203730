/**
 * A real HTTP hook receiver for tests: it checks every call's signature the way an app's
 * receiver must (verifyHookSignature), records what came, and answers as the test tells it —
 * ok, a status, a hang, or a computed JSON answer (a before-send decision).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyHookSignature, type HookVerdict } from '@seqline/hooks';

export interface ReceivedHookCall {
  path: string;
  headers: Record<string, string | undefined>;
  rawBody: string;
  /** The parsed body, undefined when it is not JSON. */
  json: unknown;
  verdict: HookVerdict;
  /** Epoch ms of arrival (receiver clock). */
  at: number;
  /** The status answered. */
  status: number;
}

export type HookReceiverMode =
  | { kind: 'ok' }
  | { kind: 'status'; status: number }
  /** Never answers (the caller's timeout must fire); the socket is closed on receiver close. */
  | { kind: 'hang' }
  /** Answers after `delayMs` with `answer(call)` as JSON (status 200), or the given status. */
  | { kind: 'answer'; answer: (call: ReceivedHookCall) => unknown; delayMs?: number; status?: number };

export interface HookReceiver {
  readonly url: string;
  /** Every call in arrival order, verified or not. */
  readonly calls: ReceivedHookCall[];
  /** Calls with a valid signature, answered 2xx: what the app accepted. */
  accepted(): ReceivedHookCall[];
  setMode(mode: HookReceiverMode): void;
  /** Resolves once `count` accepted calls arrived, or rejects after `timeoutMs`. */
  waitForAccepted(count: number, timeoutMs?: number): Promise<ReceivedHookCall[]>;
  close(): Promise<void>;
}

export interface HookReceiverOptions {
  /** The shared secret; without it no signature is checked (verdict ok). */
  secret?: string;
  /** The receiver's clock for the timestamp check (a test may skew it). */
  now?: () => number;
  mode?: HookReceiverMode;
}

export async function startHookReceiver(options: HookReceiverOptions = {}): Promise<HookReceiver> {
  const calls: ReceivedHookCall[] = [];
  let mode: HookReceiverMode = options.mode ?? { kind: 'ok' };
  const now = options.now ?? Date.now;
  const hanging = new Set<ServerResponse>();
  const waiters = new Set<() => void>();
  const accepted = () => calls.filter((c) => c.verdict.ok && c.status >= 200 && c.status < 300);

  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(',') : v;
    };
    const verdict: HookVerdict =
      options.secret === undefined
        ? { ok: true }
        : verifyHookSignature({
            secret: options.secret,
            timestamp: header(TIMESTAMP_HEADER),
            signature: header(SIGNATURE_HEADER),
            body: rawBody,
            nowMs: now(),
          });
    let json: unknown;
    try {
      json = JSON.parse(rawBody);
    } catch {
      json = undefined;
    }
    const call: ReceivedHookCall = {
      path: req.url ?? '/',
      headers: { [TIMESTAMP_HEADER]: header(TIMESTAMP_HEADER), [SIGNATURE_HEADER]: header(SIGNATURE_HEADER) },
      rawBody,
      json,
      verdict,
      at: now(),
      status: 0,
    };
    calls.push(call);
    const current = mode;
    if (!verdict.ok) return finish(res, call, 401, { error: verdict.reason });
    if (current.kind === 'hang') {
      hanging.add(res);
      return;
    }
    if (current.kind === 'status') return finish(res, call, current.status, {});
    if (current.kind === 'answer') {
      if (current.delayMs) await new Promise((r) => setTimeout(r, current.delayMs));
      return finish(res, call, current.status ?? 200, current.answer(call));
    }
    finish(res, call, 200, {});
  }
  function finish(res: ServerResponse, call: ReceivedHookCall, status: number, body: unknown): void {
    call.status = status;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
    for (const wake of waiters) wake();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    calls,
    accepted,
    setMode: (m) => {
      mode = m;
    },
    waitForAccepted: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (accepted().length < count) return;
          cleanup();
          resolve(accepted());
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`hook receiver: ${accepted().length} of ${count} calls accepted within ${timeoutMs} ms`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
