/**
 * Bench 4: 1:1 send → push latency at a fixed offered load (open loop: sends go out on a timer
 * whatever the replies do). Time runs from the moment a sender's `send` frame is written to
 * the moment the recipient's push frame carrying that appinfo arrives. The server is `npm start`
 * in a child process. Raw limits measured in the same run: a bare uWS relay at the same load,
 * and the latency of one durable LMDB commit on this disk (the 1:1 path has three in a row:
 * sender's copy, persisted fanout job, recipient's copy).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { open } from 'lmdb';
import { issueAdminToken } from '@seqline/protocol';
import { messageBody, RUN_ID } from './fixtures.ts';
import { fmtLatency, fmtMs, fmtRatio, Samples, type BenchResult, type LatencySummary } from './stats.ts';
import { BENCH_SECRET, mapLimited, sleep, startRawChild, startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const TARGET_P99_MS = 10;
/** The issue's offered load; SEQLINE_BENCH_PUSH_RATE overrides it to find the knee. */
const RATE = Number(process.env['SEQLINE_BENCH_PUSH_RATE'] ?? 2000);
const PAIRS = 100;
const WARMUP_MS = 2000;
const MEASURE_MS = 10_000;
const RAW_MEASURE_MS = 5000;
const DRAIN_MS = 5000;
const TICK_MS = 1;
/** Experiment knob: a small-group/1:1 fanout pool other than the default, set live via the admin API. */
const SMALL_POOL = process.env['SEQLINE_BENCH_SMALL_POOL'];

interface LoadResult {
  push: LatencySummary;
  ack: LatencySummary;
  /** How late sends went out against the schedule (client-side stalls). */
  lag: LatencySummary;
  sent: number;
  /** Measured messages whose push never arrived within DRAIN_MS. */
  missing: number;
  /** send → push of the first and the last tenth of the measured messages: a backlog shows as growth. */
  firstTenth: LatencySummary;
  lastTenth: LatencySummary;
  errors: Map<string, number>;
}

/**
 * Sends `rate` msg/s for `ms`, round-robin over the pairs, on a timer. Each message is due at
 * start + i/rate; every tick sends whatever is due, so a slow reply never slows the schedule.
 */
function openLoop(ms: number, send: (i: number, dueAt: number) => void): Promise<number> {
  const total = Math.floor((ms / 1000) * RATE);
  const start = performance.now();
  let sent = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * RATE) + 1);
      while (sent < due) {
        send(sent, start + (sent * 1000) / RATE);
        sent++;
      }
      if (sent >= total) resolve(sent);
      else setTimeout(tick, TICK_MS);
    };
    tick();
  });
}

async function runLoad(connect: (user: string) => Promise<BenchClient>, measureMs: number): Promise<LoadResult> {
  const senders = await mapLimited(
    Array.from({ length: PAIRS }, (_, i) => `ps${i}`),
    50,
    connect,
  );
  const receivers = await mapLimited(
    Array.from({ length: PAIRS }, (_, i) => `pr${i}`),
    50,
    connect,
  );
  const total = Math.floor((measureMs / 1000) * RATE);
  const push = new Samples(total);
  const ack = new Samples(total);
  const lag = new Samples(total);
  const errors = new Map<string, number>();
  const firstTenth = new Samples(Math.ceil(total / 10));
  const lastTenth = new Samples(Math.ceil(total / 10));
  /** appinfo → when its send frame was written, and its index; only measured messages are here. */
  const sentAt = new Map<string, { t0: number; i: number }>();
  receivers.forEach((receiver, k) => {
    receiver.onPush = (frame, at) => {
      for (const entry of frame.entries) {
        const sent = sentAt.get(entry.appinfo);
        if (sent === undefined || entry.from !== `ps${k}`) continue;
        sentAt.delete(entry.appinfo);
        const ms = at - sent.t0;
        push.add(ms);
        if (sent.i < total / 10) firstTenth.add(ms);
        else if (sent.i >= total - total / 10) lastTenth.add(ms);
      }
    };
  });
  const sendOne = (measured: boolean) => (i: number, dueAt: number) => {
    const pair = i % PAIRS;
    const appinfo = `pl-${RUN_ID}-${measured ? 'm' : 'w'}-${i}`;
    const { sentAt: t0, reply } = (senders[pair] as BenchClient).call('send', {
      appinfo,
      to: { user: `pr${pair}` },
      type: 'text',
      body: messageBody(),
    });
    if (!measured) return;
    sentAt.set(appinfo, { t0, i });
    lag.add(t0 - dueAt);
    reply.then(
      (r) => {
        if (r.reply.ok) ack.add(r.at - t0);
        else {
          const code = r.reply.error?.code ?? 'UNKNOWN';
          errors.set(code, (errors.get(code) ?? 0) + 1);
          sentAt.delete(appinfo); // refused: no push will come
        }
      },
      () => {},
    );
  };
  try {
    await openLoop(WARMUP_MS, sendOne(false));
    const sent = await openLoop(measureMs, sendOne(true));
    const drainUntil = performance.now() + DRAIN_MS;
    while (sentAt.size > 0 && performance.now() < drainUntil) await sleep(20);
    return {
      push: push.summary(),
      ack: ack.summary(),
      lag: lag.summary(),
      sent,
      missing: sentAt.size,
      errors,
      firstTenth: firstTenth.summary(),
      lastTenth: lastTenth.summary(),
    };
  } finally {
    await Promise.all([...senders, ...receivers].map((c) => c.close()));
  }
}

/** `seqline-admin limits set --small-pool n`, as the admin CLI does it. */
async function setSmallPool(port: number, smallPool: number): Promise<void> {
  const token = await issueAdminToken({ secret: BENCH_SECRET, name: 'bench', ttlSeconds: 600 });
  const res = await fetch(`http://127.0.0.1:${port}/v1/admin/limits`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ smallPool }),
  });
  if (!res.ok) throw new Error(`setting smallPool failed: HTTP ${res.status} ${await res.text()}`);
}

/** One durable commit (one small put, awaited to flushed), sequentially, on an idle environment. */
async function commitLatency(dir: string, n: number): Promise<LatencySummary> {
  const env = open({ path: dir, noSubdir: false, maxDbs: 8, mapSize: 64 * 1024 * 1024 });
  const db = env.openDB<unknown, [string, number]>({ name: 'probe' });
  const samples = new Samples(n);
  try {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await db.put(['probe', i], { kind: 'msg', body: messageBody() });
      await env.flushed;
      samples.add(performance.now() - t0);
      await sleep(1);
    }
    return samples.summary();
  } finally {
    await env.close();
  }
}

function describe(label: string, r: LoadResult): string[] {
  const errs = [...r.errors].map(([code, n]) => `${code}×${n}`).join(', ') || 'none';
  return [
    `${label}: ${r.sent} messages measured, push never arrived: ${r.missing}, error replies: ${errs}`,
    `  send → push: ${fmtLatency(r.push)}`,
    `  send → push p50, first tenth ${fmtMs(r.firstTenth.p50)} → last tenth ${fmtMs(r.lastTenth.p50)} (growth = the server fell behind the offered load)`,
    `  send → ack:  ${fmtLatency(r.ack)}`,
    `  schedule lag (client): p99 ${fmtMs(r.lag.p99)}, max ${fmtMs(r.lag.max)}`,
  ];
}

export async function runPushLatencyBench(): Promise<BenchResult> {
  const tmp = await tempDir('push');
  const notes: string[] = [];
  let server: ChildServer | undefined;
  let rawServer: ChildServer | undefined;
  try {
    const commit = await commitLatency(join(tmp.dir, 'probe'), 300);
    server = await startSeqlineChild(join(tmp.dir, 'server'));
    const seqlineUrl = server.url;
    if (SMALL_POOL !== undefined) {
      await setSmallPool(server.port, Number(SMALL_POOL));
      notes.push(`experiment: smallPool set to ${SMALL_POOL} through the admin API (SEQLINE_BENCH_SMALL_POOL)`);
    }
    const ours = await runLoad(async (user) => BenchClient.connect(seqlineUrl, await tokenFor(user)), MEASURE_MS);
    await server.stop();
    server = undefined;
    rawServer = await startRawChild();
    const rawUrl = rawServer.url;
    const raw = await runLoad((user) => BenchClient.connect(`${rawUrl}?user=${user}`), RAW_MEASURE_MS);

    notes.push(
      `${RATE} msg/s offered, open loop (${TICK_MS} ms timer), ${PAIRS} sender→recipient pairs, ${WARMUP_MS / 1000} s warm-up then ${MEASURE_MS / 1000} s measured`,
    );
    notes.push(...describe('ours', ours));
    notes.push(...describe(`raw (bare uWS relay, same load, ${RAW_MEASURE_MS / 1000} s)`, raw));
    notes.push(`one durable LMDB commit on this disk (idle, sequential): ${fmtLatency(commit)}`);
    const measuredOk = ours.missing === 0 && ours.errors.size === 0;
    return {
      figures: [
        {
          name: `1:1 send→push p50 @ ${RATE} msg/s`,
          value: fmtMs(ours.push.p50),
          target: '—',
          met: undefined,
          raw: `${fmtMs(raw.push.p50)} bare relay`,
          ratio: fmtRatio(ours.push.p50, raw.push.p50),
        },
        {
          name: `1:1 send→push p99 @ ${RATE} msg/s`,
          value: fmtMs(ours.push.p99) + (measuredOk ? '' : ' (lost/refused, see notes)'),
          target: `< ${TARGET_P99_MS} ms`,
          met: measuredOk && ours.push.p99 < TARGET_P99_MS,
          raw: `${fmtMs(raw.push.p99)} bare relay; fsync p99 ${fmtMs(commit.p99)}`,
          ratio: fmtRatio(ours.push.p99, raw.push.p99),
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
