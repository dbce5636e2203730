/**
 * Starts and planned handovers (docs/benchmarks.md, "Handover"): 2 workers and a gateway as
 * child processes, default lease ttl (10 s, so a lease wait-out costs 11 s), a keyspace of
 * their own (created first, as `seqline-admin schema migrate` would: no shard ever had an epoch).
 *
 * 1. Fresh deployment: from spawning the three processes to the gateway's `/healthz`, to its
 *    `/readyz`, and to the first acknowledged send — sent as soon as `/healthz` answers (the
 *    case of issue #32: 11.8 s after `/healthz`).
 * 2. Rolling restart under load: 1:1 sends at a fixed open-loop rate (500 msg/s) through the
 *    gateway while each worker in turn is stopped with SIGTERM and started again (a new process,
 *    a new owner id), the next one only once the new one answers `/readyz`. The longest time a
 *    send waited for its ack is the stall; a send lost is one acknowledged but not stored
 *    (sender's and recipient's copies), or never answered.
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { openScyllaStores } from '@seqline/store/scylla';
import { cleanNamespace, disturbances, waitForServices } from './distributed-stack.ts';
import { messageBody, RUN_ID } from './fixtures.ts';
import { handoverStack, type BenchNode } from './handover-stack.ts';
import { fmtLatency, fmtMs, Samples, type BenchResult, type Figure } from './stats.ts';
import { BENCH_SECRET, mapLimited, sleep } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';
import { issueToken } from '@seqline/protocol';

const RATE = Number(process.env.BENCH_HANDOVER_RATE ?? 500);
const SENDERS = 50;
const CALM_MS = 3000;
/** ttl + margin at the default lease ttl: what every start and handover waited before. */
const WAIT_OUT_MS = 10_000 + 1_000;
const CONTACT = { contactPoints: ['127.0.0.1:9042'], localDataCenter: 'datacenter1' };

export async function runHandoverBench(): Promise<BenchResult> {
  await waitForServices('before the handover bench');
  const notes: string[] = [];
  const figures: Figure[] = [];
  const keyspace = `seqline_bench_ho_${RUN_ID}`;
  const namespace = `benchho${RUN_ID.slice(-8)}`;
  const schema = await openScyllaStores({ ...CONTACT, keyspace, migrate: true });
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 3 });
  await redis.connect();
  const stack = await handoverStack(namespace, keyspace, 2);
  const live: BenchNode[] = [];
  try {
    // ---- 1. fresh deployment
    const t0 = performance.now();
    live.push(...stack.workers, stack.gateway);
    const started = Promise.all(live.map((n) => n.start()));
    started.catch(() => undefined); // awaited below; a failed start must not be an unhandled rejection meanwhile
    const healthz = await stack.gateway.until200('/healthz');
    const firstAck = httpSend(stack.gateway, 'hofirst', 'hofirst2', `first-${RUN_ID}`).then(() => performance.now());
    const readyz = await stack.gateway.until200('/readyz');
    const acked = await firstAck;
    await started;
    const workersReady = await Promise.all(stack.workers.map((w) => w.until200('/readyz')));
    const leases = countLeases(stack.workers);
    figures.push(
      {
        name: 'fresh deployment: gateway /healthz → first send acknowledged',
        value: fmtMs(acked - healthz),
        target: '< 1 s',
        met: acked - healthz < 1000,
        raw: `${fmtMs(WAIT_OUT_MS)} lease wait-out`,
        ratio: `${((acked - healthz) / WAIT_OUT_MS).toFixed(3)}× wait-out`,
      },
      { name: 'fresh deployment: start → first send acknowledged', value: fmtMs(acked - t0), target: 'info', met: undefined },
    );
    notes.push(
      `fresh deployment (2 workers + 1 gateway spawned together, keyspace ${keyspace}): /healthz ${fmtMs(healthz - t0)}, ` +
        `gateway /readyz ${fmtMs(readyz - t0)}, first ack ${fmtMs(acked - t0)}, both workers /readyz ${fmtMs(Math.max(...workersReady) - t0)} after start`,
      `  leases taken: ${leases}`,
    );

    // ---- 2. rolling restart under load
    const load = await startLoad(stack.gateway);
    await sleep(CALM_MS);
    const restarts: string[] = [];
    let generation = 1;
    for (const [i, old] of stack.workers.entries()) {
      const t = performance.now();
      await old.stop();
      const stopped = performance.now();
      const next = stack.replacement(old, ++generation);
      stack.workers[i] = next;
      live.push(next);
      await next.start();
      const ready = await next.until200('/readyz');
      restarts.push(`${old.name}: SIGTERM → exited ${fmtMs(stopped - t)}, new process /readyz ${fmtMs(ready - stopped)} after`);
    }
    await sleep(CALM_MS);
    const result = await load.finish();
    const moved = countLeases(stack.workers);
    const worst = result.ack.max;
    figures.push(
      {
        name: `rolling restart of 2 workers @ ${RATE} msg/s: longest send stall`,
        value: fmtMs(worst),
        target: '< 1 s',
        met: worst < 1000,
        raw: `${fmtMs(WAIT_OUT_MS)} lease wait-out`,
        ratio: `${(worst / WAIT_OUT_MS).toFixed(3)}× wait-out`,
      },
      {
        name: 'rolling restart: sends lost (acked not stored, or never answered)',
        value: String(result.lost + result.unanswered),
        target: '0',
        met: result.lost + result.unanswered === 0,
      },
      { name: 'rolling restart: sends refused (error reply)', value: String(result.refused), target: '0', met: result.refused === 0 },
    );
    notes.push(
      `rolling restart: ${result.sent} sends at ${RATE}/s (open loop, ${SENDERS} senders → ${SENDERS} recipients), ack ${fmtLatency(result.ack)}; ` +
        `${result.overSecond} waited over 1 s`,
      ...restarts.map((r) => `  ${r}`),
      `  leases taken by the new workers: ${moved}; the longest lease wait ${fmtMs(Math.max(...stack.workers.map((w) => w.longestLeaseWaitMs)))}`,
      `  errors: ${[...result.errors].map(([code, n]) => `${code}=${n}`).join(' ') || 'none'}; stored copies checked by sync: ${result.checked}`,
    );
  } finally {
    await Promise.all(live.map((n) => n.stop()));
    await cleanNamespace(namespace, redis).catch((err: unknown) => disturbances.push(`clean-up of ${namespace} failed: ${String(err)}`));
    redis.disconnect();
    await schema.client
      .execute(`DROP KEYSPACE IF EXISTS ${keyspace}`, [], { readTimeout: 120_000 })
      .catch((err: unknown) => disturbances.push(`drop of ${keyspace} failed: ${String(err)}`));
    await schema.close();
  }
  if (disturbances.length > 0) notes.push(`service disturbances: ${disturbances.join('; ')}`);
  return { figures, notes };
}

function countLeases(workers: BenchNode[]): string {
  const total = new Map<string, number>();
  for (const w of workers) for (const [reason, n] of w.leases) total.set(reason, (total.get(reason) ?? 0) + n);
  return [...total].map(([reason, n]) => `${n} ${reason}`).join(', ') || 'none';
}

async function httpSend(gateway: BenchNode, from: string, to: string, appinfo: string): Promise<void> {
  const token = await issueToken({ secret: BENCH_SECRET, user: from, tenant: 'default', ttlSeconds: 3600 });
  const res = await fetch(`${gateway.url}/v1/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ appinfo, to: { user: to }, type: 'text', body: messageBody() }),
  });
  const body = (await res.json()) as { ok: boolean; error?: unknown };
  if (!body.ok) throw new Error(`first send failed: ${res.status} ${JSON.stringify(body.error)}`);
}

interface LoadResult {
  sent: number;
  ack: ReturnType<Samples['summary']>;
  overSecond: number;
  errors: Map<string, number>;
  refused: number;
  unanswered: number;
  lost: number;
  checked: number;
}

/** Open-loop 1:1 sends at RATE until finish(); then every acknowledged copy is looked up. */
async function startLoad(gateway: BenchNode): Promise<{ finish(): Promise<LoadResult> }> {
  const wsUrl = `ws://127.0.0.1:${gateway.port}/v1/ws`;
  const tag = `ho${RUN_ID.slice(-6)}`;
  const senders = await mapLimited(
    Array.from({ length: SENDERS }, (_, i) => `${tag}s${i}`),
    25,
    async (u) => BenchClient.connect(wsUrl, await tokenFor(u)),
  );
  const ack = new Samples(RATE * 600);
  const errors = new Map<string, number>();
  const acked: { sender: number; appinfo: string }[] = [];
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let overSecond = 0;
  let unanswered = 0;
  const t0 = performance.now();
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - t0) * RATE) / 1000);
    for (; sent < due; sent++) {
      const k = sent;
      const s = k % SENDERS;
      const appinfo = `${tag}-${k}`;
      const { sentAt, reply } = senders[s]!.call('send', { appinfo, to: { user: `${tag}r${s}` }, type: 'text', body: messageBody() });
      const done = reply.then(
        (r) => {
          if (r.reply.ok) {
            const ms = r.at - sentAt;
            ack.add(ms);
            if (ms > 1000) overSecond++;
            acked.push({ sender: s, appinfo });
          } else {
            const code = r.reply.error?.code ?? '?';
            errors.set(code, (errors.get(code) ?? 0) + 1);
          }
        },
        () => {
          unanswered++;
        },
      );
      inFlight.add(done);
      void done.finally(() => inFlight.delete(done));
    }
  }, 5);
  return {
    async finish() {
      clearInterval(timer);
      const deadline = performance.now() + 60_000;
      while (inFlight.size > 0 && performance.now() < deadline) await Promise.race([...inFlight, sleep(1000)]);
      unanswered += inFlight.size;
      const lost = await countLost(senders, wsUrl, tag, acked);
      await Promise.all(senders.map((c) => c.close()));
      const refused = [...errors.values()].reduce((a, b) => a + b, 0);
      return { sent, ack: ack.summary(), overSecond, errors, refused, unanswered, lost, checked: acked.length * 2 };
    },
  };
}

/** Acknowledged sends whose sender copy or recipient copy a sync does not find (recipient copies get 30 s: they may go through a job). */
async function countLost(
  senders: BenchClient[],
  wsUrl: string,
  tag: string,
  acked: { sender: number; appinfo: string }[],
): Promise<number> {
  const bySender = new Map<number, string[]>();
  for (const a of acked) bySender.set(a.sender, [...(bySender.get(a.sender) ?? []), a.appinfo]);
  let lost = 0;
  await mapLimited([...bySender], 10, async ([s, appinfos]) => {
    const own = await storedAppinfos(senders[s]!);
    const reader = await BenchClient.connect(wsUrl, await tokenFor(`${tag}r${s}`));
    try {
      let theirs = await storedAppinfos(reader);
      for (let i = 0; i < 30 && appinfos.some((a) => !theirs.has(a)); i++) {
        await sleep(1000);
        theirs = await storedAppinfos(reader);
      }
      lost += appinfos.filter((a) => !own.has(a) || !theirs.has(a)).length;
    } finally {
      await reader.close();
    }
  });
  return lost;
}

async function storedAppinfos(client: BenchClient): Promise<Set<string>> {
  const found = new Set<string>();
  for (let maxSeq = 0; ;) {
    const r = (await client.ok('sync', { maxSeq, limit: 1000 })).reply;
    const entries = r['entries'] as { seq: number; appinfo: string }[];
    for (const e of entries) found.add(e.appinfo);
    if (r['hasMore'] !== true || entries.length === 0) return found;
    maxSeq = (entries.at(-1) as { seq: number }).seq;
  }
}
