/**
 * Bench 3: `sync` of 200 entries over a real WebSocket against the embedded server running as
 * `npm start` in a child process (one core for the server, one for this client), from a random
 * maxSeq in an inbox of INBOX_ENTRIES entries. Raw limit: the same request/reply round trip
 * with the same reply bytes against a bare uWebSockets.js server (no read, no encode).
 */
import { join } from 'node:path';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { messageEntry, RUN_ID } from './fixtures.ts';
import { fmtBytes, fmtLatency, fmtMs, fmtRatio, Samples, type BenchResult } from './stats.ts';
import { startRawChild, startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const TARGET_P99_MS = 5;
export const USER = 'syncer';
export const INBOX_ENTRIES = 5000;
export const PAGE = 200;
const WARMUP = 300;
const ITERATIONS = 5000;
const BLOCK = 500;

/** Writes the inbox through InboxOwner on the server's data dir before the server starts. */
export async function prefill(dataDir: string): Promise<void> {
  const engine = await openEmbeddedEngine({ dir: join(dataDir, 'db'), logger: silentLogger });
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const push = createLocalPushBus({ logger: silentLogger });
  const owner = new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger: silentLogger, epoch });
  try {
    const inbox = inboxKey('default', USER);
    for (let i = 0; i < INBOX_ENTRIES; i += 500) {
      const batch = Array.from({ length: 500 }, (_, k) => messageEntry(`sy-${RUN_ID}-${i + k}`, `peer${(i + k) % 50}`, Date.now()));
      await owner.append({ inbox, entries: batch });
    }
  } finally {
    await owner.close();
    await push.close();
    await engine.close();
  }
}

/** Sequential round trips (one request outstanding), so each sample is one request's latency. */
export async function roundTrips(
  client: BenchClient,
  op: string,
  args: () => Record<string, unknown>,
  n: number,
  samples: Samples,
  check?: (r: Record<string, unknown>) => void,
): Promise<void> {
  for (let i = 0; i < n; i++) {
    const { sentAt, reply } = client.call(op, args());
    const r = await reply;
    if (!r.reply.ok) throw new Error(`${op} failed: ${r.reply.error?.code} ${r.reply.error?.message}`);
    check?.(r.reply);
    samples.add(r.at - sentAt);
  }
}

export async function runSyncBench(): Promise<BenchResult> {
  const tmp = await tempDir('sync');
  const notes: string[] = [];
  let server: ChildServer | undefined;
  let rawServer: ChildServer | undefined;
  try {
    await prefill(tmp.dir);
    // Rate limits raised: this measures sync, not the per-user token bucket.
    server = await startSeqlineChild(tmp.dir, { SEQLINE_RATE_PER_SEC: '1000000', SEQLINE_RATE_BURST: '1000000' });
    rawServer = await startRawChild();
    const client = await BenchClient.connect(server.url, await tokenFor(USER));
    const rawClient = await BenchClient.connect(`${rawServer.url}?user=${USER}`);

    const first = await client.ok('sync', { maxSeq: 0, limit: PAGE });
    const head = Number(first.reply['headSeq']);
    if (!(head >= INBOX_ENTRIES)) throw new Error(`inbox head ${head} < ${INBOX_ENTRIES}: prefill did not land`);
    const randomMaxSeq = () => ({ maxSeq: Math.floor(Math.random() * (head - PAGE)), limit: PAGE });
    const check = (r: Record<string, unknown>) => {
      const entries = r['entries'];
      if (!Array.isArray(entries) || entries.length !== PAGE)
        throw new Error(`sync returned ${Array.isArray(entries) ? entries.length : '?'} entries, expected ${PAGE}`);
    };
    // A real answer, without its id, becomes the raw server's canned reply.
    const sample = await client.ok('sync', randomMaxSeq());
    const { id: _id, ...rest } = sample.reply;
    await rawClient.ok('setReply', { tail: JSON.stringify(rest).slice(1) });

    const ours = new Samples(ITERATIONS);
    const raw = new Samples(ITERATIONS);
    await roundTrips(client, 'sync', randomMaxSeq, WARMUP, new Samples(WARMUP), check);
    await roundTrips(rawClient, 'echo', () => ({}), WARMUP, new Samples(WARMUP));
    // Alternating blocks: this VM's noise drifts, both sides should see the same.
    for (let done = 0; done < ITERATIONS; done += BLOCK) {
      await roundTrips(client, 'sync', randomMaxSeq, BLOCK, ours, check);
      await roundTrips(rawClient, 'echo', () => ({}), BLOCK, raw);
    }
    await client.close();
    await rawClient.close();
    const o = ours.summary();
    const r = raw.summary();
    notes.push(
      `inbox of ${INBOX_ENTRIES} entries; ${ITERATIONS} sequential syncs {maxSeq: random, limit: ${PAGE}} after ${WARMUP} warm-up; reply ≈ ${fmtBytes(sample.bytes)}`,
    );
    notes.push(`ours: ${fmtLatency(o)}`);
    notes.push(`raw (bare uWS, canned reply of the same bytes, blocks of ${BLOCK} alternating with ours): ${fmtLatency(r)}`);
    notes.push('times: request written → reply frame received by the client (before it is parsed)');
    return {
      figures: [
        {
          name: `sync ${PAGE} entries p50 (WebSocket)`,
          value: fmtMs(o.p50),
          target: '—',
          met: undefined,
          raw: `${fmtMs(r.p50)} bare uWS`,
          ratio: fmtRatio(o.p50, r.p50),
        },
        {
          name: `sync ${PAGE} entries p99 (WebSocket)`,
          value: fmtMs(o.p99),
          target: `< ${TARGET_P99_MS} ms`,
          met: o.p99 < TARGET_P99_MS,
          raw: `${fmtMs(r.p99)} bare uWS`,
          ratio: fmtRatio(o.p99, r.p99),
        },
      ],
      notes,
    };
  } finally {
    await server?.stop();
    await rawServer?.stop();
    await tmp.remove();
  }
}
