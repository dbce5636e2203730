/**
 * One message to a group of N connected members: N sockets of distinct users form a group, one
 * warm-up message goes to everyone, then each timed message is sent by member 0 once the
 * previous one reached every member. Per message: send → its frame on each member's socket
 * (the sender's own included); the figures are the median over messages of the members' p50
 * and of the last member.
 */
import { performance } from 'node:perf_hooks';
import { Samples } from '../stats.ts';
import { mapLimited, sleep } from '../support.ts';
import { startMeter, type StepLoad } from './meter.ts';
import type { PeersOptions } from './options.ts';
import type { PeerClient, PeerSystem } from './system.ts';

const CONNECT_CONCURRENCY = 100;
const DELIVERY_TIMEOUT_MS = 60_000;

export interface GroupRun {
  members: number;
  /** Per timed message: members' p50 and the last member's time (ms). */
  p50s: number[];
  lasts: number[];
  /** Members a timed message never reached. */
  missing: number;
  connectMs: number;
  formMs: number;
  detail: string | undefined;
  load: StepLoad;
}

export async function runGroup(system: PeerSystem, size: number, o: PeersOptions, tag: string): Promise<GroupRun> {
  const users = Array.from({ length: size }, (_, i) => `${tag}g${size}m${i}`);
  const group = `${tag}g${size}`;
  const t0 = performance.now();
  const members = await mapLimited(users, CONNECT_CONCURRENCY, (u) => system.connect(u));
  const connectMs = performance.now() - t0;
  try {
    const t1 = performance.now();
    const detail = await system.formGroup(group, users, members);
    const formMs = performance.now() - t1;
    let current: { id: string; sentAt: number; times: Samples; reached: Set<PeerClient> } | undefined;
    for (const m of members) {
      m.onMessage = (id, at) => {
        // An id-less delivery is a group push; only one message is in flight at a time.
        if (!current || (id !== undefined && id !== current.id) || current.reached.has(m)) return;
        current.reached.add(m);
        current.times.add(at - current.sentAt);
      };
    }
    const sender = members[0] as PeerClient;
    const one = async (k: number) => {
      const id = `${tag}-g${size}-${k}`;
      const sent = sender.sendToGroup(group, id);
      const run = { id, sentAt: sent.sentAt, times: new Samples(size), reached: new Set<PeerClient>() };
      current = run;
      const code = await sent.ack;
      if (code !== undefined) throw new Error(`group send refused: ${code}`);
      const deadline = performance.now() + DELIVERY_TIMEOUT_MS;
      while (run.reached.size < size && performance.now() < deadline) await sleep(2);
      return run;
    };
    await one(0); // warm-up
    const stop = await startMeter(system);
    const p50s: number[] = [];
    const lasts: number[] = [];
    let missing = 0;
    for (let k = 1; k <= o.groupRepeats; k++) {
      const run = await one(k);
      const s = run.times.summary();
      p50s.push(s.p50);
      lasts.push(s.max);
      missing += size - run.reached.size;
    }
    return { members: size, p50s, lasts, missing, connectMs, formMs, detail, load: await stop() };
  } finally {
    await mapLimited(members, 500, (m) => m.close());
  }
}
