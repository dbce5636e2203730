/**
 * The push part of the distributed bench: 1:1 sends at a fixed open-loop rate through the
 * gateway, send → push and send → ack latency, CPU per message by process, and a check that
 * every acknowledged send is stored (a push is best effort; a sync must find the message).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Client } from 'cassandra-driver';
import type { DistributedStack } from './distributed-stack.ts';
import { messageBody, RUN_ID } from './fixtures.ts';
import { describeBackground, nodeBackground } from './node-background.ts';
import { fmtMs, Samples, type LatencySummary } from './stats.ts';
import { cpuSecondsOf, mapLimited, servicePid, sleep } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const PAIRS = 100;
/** Warm-up: the rate ramps from a tenth to the full rate, as a deployed gateway's load grows (a cold process hit at full rate first compiles, then drains a backlog). */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 4000);
const MEASURE_MS = Number(process.env.BENCH_MEASURE_MS ?? 8000);
/**
 * `BENCH_PUSH_DUMP=<file>`: one line per pushed message of the measured part, "<epoch ms sent>
 * <send → push ms>", to line a tail up with other clocks (a GC log with wall-clock time, say).
 */
const PUSH_DUMP = process.env.BENCH_PUSH_DUMP;

export const PUSH_LOAD_SHAPE = `open loop, ${PAIRS} pairs, ${WARMUP_MS / 1000} s warm-up (rate ramping from 10 % to 100 %) + ${MEASURE_MS / 1000} s measured at the rate`;

export async function firstSend(client: BenchClient, to: string): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; ; i++) {
    const r = await client.call('send', { appinfo: `first-${RUN_ID}-${i}`, to: { user: to }, type: 'text', body: messageBody() }).reply;
    if (r.reply.ok) return performance.now() - t0;
    if (performance.now() - t0 > 60_000) throw new Error(`first send never succeeded: ${JSON.stringify(r.reply.error)}`);
    await sleep(250);
  }
}

export interface LoadResult {
  rate: number;
  push: LatencySummary;
  ack: LatencySummary;
  sent: number;
  errors: Map<string, number>;
  growth: string;
  /** The Cassandra node's flushes and compactions in the measured window (node-background.ts). */
  background: string;
  /** Acknowledged sends whose push never arrived, and how many of them a sync did not find either. */
  missing: number;
  unsynced: number;
  /** Sends never answered (neither ack nor error), and the close codes of sockets lost during the load. */
  unanswered: number;
  closed: string[];
  /** CPU µs per message sent in the measured window, by process. */
  cpu: Map<string, number>;
}

/** CPU seconds used so far by each process of the stack and the services. */
async function stackCpu(pids: Map<string, number | undefined>): Promise<Map<string, number>> {
  const self = process.cpuUsage();
  const out = new Map<string, number>([['load generator', (self.user + self.system) / 1e6]]);
  for (const [name, pid] of pids) if (pid !== undefined) out.set(name, await cpuSecondsOf(pid).catch(() => NaN));
  return out;
}

/** Appinfos of every entry stored in the client's inbox (paged sync from 0). */
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

export async function pushLoad(stack: DistributedStack, rate: number, tag: string, node: Client): Promise<LoadResult> {
  const url = stack.gatewayUrl;
  const pids = new Map<string, number | undefined>([
    ['gateway', stack.pids.gateway],
    ['worker', stack.pids.worker],
    ['Cassandra', await servicePid('cassandra')],
    ['Redis', await servicePid('redis')],
    ['NATS', await servicePid('nats')],
  ]);
  const connect = async (user: string) => BenchClient.connect(url, await tokenFor(user));
  const senders = await mapLimited(
    Array.from({ length: PAIRS }, (_, i) => `${tag}s${i}`),
    50,
    connect,
  );
  const receivers = await mapLimited(
    Array.from({ length: PAIRS }, (_, i) => `${tag}r${i}`),
    50,
    connect,
  );
  const phases = { warmUp: Infinity, measured: Infinity };
  const total = Math.floor((MEASURE_MS / 1000) * rate);
  const push = new Samples(total);
  const ack = new Samples(total);
  const tenths = [new Samples(total), new Samples(total)];
  // By the second the message was sent in: shows whether a tail is spread out or one burst.
  const seconds = Array.from({ length: Math.ceil(MEASURE_MS / 1000) }, () => new Samples(Math.ceil(rate)));
  const errors = new Map<string, number>();
  const sentAt = new Map<string, { t0: number; i: number; acked: boolean }>();
  const dump: string[] | undefined = PUSH_DUMP === undefined ? undefined : [];
  for (const r of receivers) {
    r.onPush = (frame, at) => {
      for (const e of frame.entries) {
        const s = sentAt.get(e.appinfo);
        if (!s) continue;
        sentAt.delete(e.appinfo);
        push.add(at - s.t0);
        dump?.push(`${(performance.timeOrigin + s.t0).toFixed(1)} ${(at - s.t0).toFixed(2)}`);
        if (s.i < total / 10) tenths[0]!.add(at - s.t0);
        else if (s.i >= total - total / 10) tenths[1]!.add(at - s.t0);
        seconds[Math.floor(s.i / rate)]?.add(at - s.t0);
      }
    };
  }
  // Sends due after t ms: the full rate, or (ramp) a rate growing linearly from rate/10 to rate.
  const dueAt = (t: number, ms: number, ramp: boolean) => (rate / 1000) * (ramp ? 0.1 * t + (0.45 * t * t) / ms : t);
  const loop = (ms: number, measured: boolean) =>
    new Promise<number>((resolve) => {
      const n = Math.floor(dueAt(ms, ms, !measured));
      const start = performance.now();
      let sent = 0;
      const tick = () => {
        const due = Math.min(n, Math.floor(dueAt(performance.now() - start, ms, !measured)) + 1);
        for (; sent < due; sent++) {
          const pair = sent % PAIRS;
          const appinfo = `dp-${RUN_ID}-${tag}-${measured ? 'm' : 'w'}-${sent}`;
          const { sentAt: t0, reply } = (senders[pair] as BenchClient).call('send', {
            appinfo,
            to: { user: `${tag}r${pair}` },
            type: 'text',
            body: messageBody(),
          });
          if (!measured) {
            reply.catch(() => undefined); // a lost socket shows in the measured part
            continue;
          }
          const i = sent;
          const sending = { t0, i, acked: false };
          sentAt.set(appinfo, sending);
          reply.then(
            (r) => {
              if (r.reply.ok) {
                ack.add(r.at - t0);
                sending.acked = true;
                return;
              }
              const code = r.reply.error?.code ?? 'UNKNOWN';
              errors.set(code, (errors.get(code) ?? 0) + 1);
              sentAt.delete(appinfo);
            },
            () => {
              errors.set('SOCKET_CLOSED', (errors.get('SOCKET_CLOSED') ?? 0) + 1);
              sentAt.delete(appinfo);
            },
          );
        }
        if (sent >= n) resolve(sent);
        else setTimeout(tick, 1);
      };
      tick();
    });
  try {
    await firstSend(senders[0] as BenchClient, `${tag}r0`);
    phases.warmUp = performance.now();
    await loop(WARMUP_MS, false);
    phases.measured = performance.now();
    const cpu0 = await stackCpu(pids);
    const background0 = await nodeBackground(node);
    const sent = await loop(MEASURE_MS, true);
    const until = performance.now() + 10_000;
    while (sentAt.size > 0 && performance.now() < until) await sleep(20);
    const cpu1 = await stackCpu(pids);
    const background = describeBackground(background0, await nodeBackground(node));
    const cpu = new Map([...cpu1].map(([name, s1]) => [name, ((s1 - (cpu0.get(name) ?? NaN)) * 1e6) / sent]));
    // A push is best effort (a client that misses one syncs); what was acknowledged must be stored.
    const missingTo = new Map<number, string[]>();
    let unanswered = 0;
    for (const [appinfo, { i, acked }] of sentAt) {
      if (!acked) unanswered++;
      else {
        const list = missingTo.get(i % PAIRS) ?? [];
        list.push(appinfo);
        missingTo.set(i % PAIRS, list);
      }
    }
    let unsynced = 0;
    for (const [pair, appinfos] of missingTo) {
      const stored = await storedAppinfos(receivers[pair] as BenchClient);
      unsynced += appinfos.filter((a) => !stored.has(a)).length;
    }
    const closed = [...senders.map((c) => ['sender', c] as const), ...receivers.map((c) => ['receiver', c] as const)].flatMap(
      ([role, c]) => (c.closedWith ? [describeLoss(role, c, phases)] : []),
    );
    if (closed.length > 0) closed.push(await gatewayCloses(stack), ...gatewayCloseLines(stack.logTail('gateway')));
    const growth =
      `p50 first tenth ${fmtMs(tenths[0]!.summary().p50)} → last tenth ${fmtMs(tenths[1]!.summary().p50)}; ` +
      `p99 by second sent: ${seconds.map((s) => fmtMs(s.summary().p99)).join(', ')}`;
    if (PUSH_DUMP !== undefined && dump !== undefined) writeFileSync(PUSH_DUMP, `${dump.join('\n')}\n`);
    return {
      rate,
      push: push.summary(),
      ack: ack.summary(),
      sent,
      missing: sentAt.size - unanswered,
      unanswered,
      unsynced,
      closed,
      errors,
      growth,
      cpu,
      background,
    };
  } finally {
    await Promise.all([...senders, ...receivers].map((c) => c.close()));
  }
}

/** A lost socket: its role, close code, how long it had been open and in which phase it closed. */
function describeLoss(role: string, c: BenchClient, phases: { warmUp: number; measured: number }): string {
  const lost = c.closedWith as NonNullable<BenchClient['closedWith']>;
  const phase = lost.at < phases.warmUp ? 'before the warm-up' : lost.at < phases.measured ? 'in the warm-up' : 'while measured';
  return `${role} ${lost.code}${lost.error ? ` ${lost.error}` : ''} after ${((lost.at - c.openedAt) / 1000).toFixed(1)} s open, ${phase}`;
}

/** The gateway's count of closed sockets by code, and of those it closed itself (its /metrics). */
async function gatewayCloses(stack: DistributedStack): Promise<string> {
  const text = await fetch(stack.gatewayUrl.replace(/^ws/, 'http').replace(/\/v1\/ws$/, '/metrics')).then(
    (r) => r.text(),
    (err: unknown) => String(err),
  );
  const lines = text.split('\n').filter((line) => /^seqline_gateway_(connections_closed|forced_closes)_total/.test(line));
  return `gateway saw: ${lines.join(', ') || 'no closes'}`;
}

/** The gateway's log lines about sockets it closed or errors it logged (the last 8 kB of its output). */
function gatewayCloseLines(tail: string): string[] {
  return tail
    .split('\n')
    .filter((line) => /closing socket|"level":(40|50|60)/.test(line))
    .slice(-5)
    .map((line) => `gateway: ${line.slice(0, 300)}`);
}

/** Sustained: nothing lost or refused, and the last tenth's p50 did not run away from the first. */
export const sustained = (r: LoadResult) => r.missing === 0 && r.unanswered === 0 && r.errors.size === 0 && r.push.p99 < 1000;

export function fmtCpu(cpu: Map<string, number>, rate: number): string {
  const total = [...cpu.values()].reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  const parts = [...cpu].map(([name, us]) => `${name} ${Number.isFinite(us) ? us.toFixed(0) : 'n/a'}`).join(', ');
  return `${parts}; total ${total.toFixed(0)} µs = ${((total * rate) / 1e6).toFixed(2)} cores at ${rate} msg/s`;
}
