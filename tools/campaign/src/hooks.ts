/**
 * The app's side of the hooks during a round: an HTTP receiver that checks each call's
 * signature as an app must, answers 2xx (or, while failures are on, a 500 now and then, so the
 * queue's retries are exercised), and records every call in the history.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyHookSignature } from '@seqline/hooks';
import { now, type HistoryWriter } from './history.ts';
import type { Rng } from './rng.ts';

export const HOOK_SECRET = 'campaign-hook-secret-0123456789';

export interface HookSink {
  readonly url: string;
  /** Accepted (2xx) after-send events so far, by `from/appinfo`. */
  readonly afterSend: Set<string>;
  /** Accepted notifications so far: user → seqs named. */
  readonly notified: Map<string, Set<number>>;
  /** Answer a 500 to this fraction of calls (0 turns failures off). */
  failRate: number;
  close(): Promise<void>;
}

export interface HookSinkOptions {
  history: HistoryWriter;
  rng: Rng;
  /** The world's wall clock (Date.now plus any simulated time that passed), for the timestamp check. */
  wallClock: () => number;
}

interface HookBody {
  type?: string;
  from?: string;
  appinfo?: string;
  user?: string;
  entries?: { seq: number }[];
}

export async function startHookSink(o: HookSinkOptions): Promise<HookSink> {
  const afterSend = new Set<string>();
  const notified = new Map<string, Set<number>>();
  const sink = { failRate: 0 };
  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(',') : v;
    };
    const verdict = verifyHookSignature({
      secret: HOOK_SECRET,
      timestamp: header(TIMESTAMP_HEADER),
      signature: header(SIGNATURE_HEADER),
      body: raw,
      nowMs: o.wallClock(),
    });
    let body: HookBody = {};
    try {
      body = JSON.parse(raw) as HookBody;
    } catch {
      // recorded as it came
    }
    const status = !verdict.ok ? 401 : o.rng.chance(sink.failRate) ? 500 : 200;
    const kind = body.type ?? 'unknown';
    o.history.write({ t: 'hook', kind, at: now(), status, signed: verdict.ok, body });
    if (status === 200 && kind === 'after_send' && body.from && body.appinfo) afterSend.add(`${body.from}/${body.appinfo}`);
    if (status === 200 && kind === 'notify' && body.user) {
      let seqs = notified.get(body.user);
      if (!seqs) notified.set(body.user, (seqs = new Set()));
      for (const e of body.entries ?? []) seqs.add(e.seq);
    }
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `http://127.0.0.1:${port}/hook`,
    afterSend,
    notified,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
