/**
 * 1:1 delivery at fixed offered rates, open loop (sends go out on a timer whatever the replies
 * do), round-robin over sender → recipient pairs. Time runs from the moment a sender's frame is
 * written to the moment the recipient's frame carrying that message arrives. Then the highest
 * rate of the ladder (refined by bisection) whose p99 stays under the limit with nothing lost or
 * refused, and the systems' CPU per delivered message.
 */
import { performance } from 'node:perf_hooks';
import { Samples, type LatencySummary } from '../stats.ts';
import { mapLimited, sleep } from '../support.ts';
import { startMeter, type StepLoad } from './meter.ts';
import type { PeersOptions } from './options.ts';
import type { PeerClient, PeerSystem } from './system.ts';

const TICK_MS = 1;

export interface RateResult {
  rate: number;
  /** Messages per second actually sent in the measured window (the generator may fall behind). */
  achieved: number;
  sent: number;
  delivered: number;
  missing: number;
  errors: Map<string, number>;
  delivery: LatencySummary;
  ack: LatencySummary;
  /** How late sends went out against the schedule. */
  lag: LatencySummary;
  /** Measured window and drain. */
  load: StepLoad;
  ok: boolean;
  /** Tries it took (the last is reported). */
  tries: number;
}

export interface RatesResult {
  byRate: Map<number, RateResult>;
  /** Highest rate that held, and the lowest that did not (undefined when none / all held). */
  highestOk: number | undefined;
  firstFailed: number | undefined;
}

/** Sends `rate` msg/s for `ms`: each message is due at start + i/rate; every tick sends what is due. */
function openLoop(rate: number, ms: number, send: (i: number, dueAt: number) => void): Promise<{ sent: number; ms: number }> {
  const total = Math.floor((ms / 1000) * rate);
  const start = performance.now();
  let sent = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
      while (sent < due) {
        send(sent, start + (sent * 1000) / rate);
        sent++;
      }
      if (sent >= total) resolve({ sent, ms: performance.now() - start });
      else setTimeout(tick, TICK_MS);
    };
    tick();
  });
}

async function runRate(
  system: PeerSystem,
  senders: PeerClient[],
  receivers: PeerClient[],
  users: string[],
  rate: number,
  o: PeersOptions,
  tag: string,
): Promise<RateResult> {
  const total = Math.floor((o.measureMs / 1000) * rate);
  const delivery = new Samples(total);
  const ack = new Samples(total);
  const lag = new Samples(total);
  const errors = new Map<string, number>();
  const sentAt = new Map<string, number>();
  /** Every message of this rate not delivered or refused yet, warm-up included. */
  const pending = new Set<string>();
  let delivered = 0;
  for (const receiver of receivers) {
    receiver.onMessage = (id, at) => {
      if (id !== undefined) pending.delete(id);
      const t0 = id === undefined ? undefined : sentAt.get(id);
      if (t0 === undefined || id === undefined) return;
      sentAt.delete(id);
      delivered++;
      delivery.add(at - t0);
    };
  }
  const sendOne = (measured: boolean) => (i: number, dueAt: number) => {
    const pair = i % senders.length;
    const id = `${tag}-${rate}-${measured ? 'm' : 'w'}-${i}`;
    const sent = (senders[pair] as PeerClient).send(users[pair] as string, id);
    pending.add(id);
    if (!measured) {
      void sent.ack.then((code) => code !== undefined && pending.delete(id));
      return;
    }
    sentAt.set(id, sent.sentAt);
    lag.add(sent.sentAt - dueAt);
    void sent.ack.then((code) => {
      if (code === undefined) ack.add(performance.now() - sent.sentAt);
      else {
        errors.set(code, (errors.get(code) ?? 0) + 1);
        sentAt.delete(id); // refused: nothing will be delivered
        pending.delete(id);
      }
    });
  };
  await openLoop(rate, o.warmupMs, sendOne(false));
  const stop = await startMeter(system);
  const loop = await openLoop(rate, o.measureMs, sendOne(true));
  const drainUntil = performance.now() + o.drainMs;
  while (sentAt.size > 0 && performance.now() < drainUntil) await sleep(10);
  const load = await stop();
  // A rate that did not hold leaves a backlog: the next rate starts once it is delivered.
  const settleUntil = performance.now() + 60_000;
  while (pending.size > 0 && performance.now() < settleUntil) await sleep(20);
  for (const receiver of receivers) receiver.onMessage = undefined;
  const d = delivery.summary();
  const refused = [...errors.values()].reduce((a, b) => a + b, 0);
  return {
    rate,
    achieved: loop.sent / (loop.ms / 1000),
    sent: loop.sent,
    delivered,
    missing: loop.sent - delivered - refused,
    errors,
    delivery: d,
    ack: ack.summary(),
    lag: lag.summary(),
    load,
    ok: delivered === loop.sent && d.p99 < o.p99LimitMs,
    tries: 1,
  };
}

/** Every fixed rate, and the ladder upwards until a rate does not hold, then `refine` bisections. */
export async function runRates(system: PeerSystem, o: PeersOptions, tag: string, log: (line: string) => void): Promise<RatesResult> {
  const senderUsers = Array.from({ length: o.pairs }, (_, i) => `${tag}s${i}`);
  const receiverUsers = Array.from({ length: o.pairs }, (_, i) => `${tag}r${i}`);
  const senders = await mapLimited(senderUsers, 50, (u) => system.connect(u));
  const receivers = await mapLimited(receiverUsers, 50, (u) => system.connect(u));
  const byRate = new Map<number, RateResult>();
  /** On the ladder a rate that does not hold is tried again (`retries` times): one stall of a shared machine should not end it. */
  const measure = async (rate: number, retries: number) => {
    const cached = byRate.get(rate);
    if (cached) return cached;
    let r: RateResult | undefined;
    for (let attempt = 1; attempt <= 1 + retries && !r?.ok; attempt++) {
      r = { ...(await runRate(system, senders, receivers, receiverUsers, rate, o, `${tag}t${attempt}`)), tries: attempt };
      log(
        `${rate} msg/s (try ${attempt}): p50 ${r.delivery.p50.toFixed(2)} ms, p99 ${r.delivery.p99.toFixed(2)} ms, delivered ${r.delivered}/${r.sent}, lag p99 ${r.lag.p99.toFixed(1)} ms → ${r.ok ? 'held' : 'did not hold'}`,
      );
    }
    if (!r) throw new Error(`rate ${rate}: not measured`);
    byRate.set(rate, r);
    return r;
  };
  try {
    let highestOk: number | undefined;
    let firstFailed: number | undefined;
    for (const rate of o.ladder) {
      if ((await measure(rate, o.retries)).ok) highestOk = rate;
      else {
        firstFailed = rate;
        break;
      }
    }
    for (let i = 0; i < o.refine && firstFailed !== undefined; i++) {
      const low = highestOk ?? 0;
      const mid = Math.round((low + firstFailed) / 2 / 50) * 50;
      if (mid <= low || mid >= firstFailed) break;
      if ((await measure(mid, o.retries)).ok) highestOk = mid;
      else firstFailed = mid;
    }
    for (const rate of [...o.fixedRates].sort((a, b) => a - b)) await measure(rate, 0);
    return { byRate, highestOk, firstFailed };
  } finally {
    await Promise.all([...senders, ...receivers].map((c) => c.close()));
  }
}
