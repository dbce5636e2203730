/**
 * Catch-up after a reconnect: a user's client notes where it stands and goes offline; N messages
 * reach that user (from several senders, each acknowledged, and each seen by a second socket of
 * the user, so all are stored and delivered before the clock starts); the client reconnects and
 * receives all N — Seqline by paging `sync` from its max seq, Centrifugo by recovering its
 * personal channel from its offset in the connect reply. Timed from opening the socket to the
 * last message received; repeated from the same mark.
 */
import { performance } from 'node:perf_hooks';
import { mapLimited, sleep } from '../support.ts';
import { startMeter, type StepLoad } from './meter.ts';
import type { PeersOptions } from './options.ts';
import type { CatchUpResult, PeerClient, PeerSystem } from './system.ts';

const SENDERS = 20;
const IN_FLIGHT = 200;

export interface CatchUpRun {
  count: number;
  runs: CatchUpResult[];
  /** Filling the offline inbox: acknowledged messages per second. */
  fillRate: number;
  load: StepLoad;
}

async function sendAll(senders: PeerClient[], to: string, ids: string[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < ids.length) {
      const i = next++;
      const id = ids[i] as string;
      for (let attempt = 0; ; attempt++) {
        const code = await (senders[i % senders.length] as PeerClient).send(to, id).ack;
        if (code === undefined) break;
        // Safe to resend: the same id is de-duplicated (Seqline) and Centrifugo refuses nothing here.
        if (attempt > 50) throw new Error(`catch-up fill: message ${id} refused ${code}`);
        await sleep(50);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

export async function runCatchUp(system: PeerSystem, o: PeersOptions, tag: string): Promise<CatchUpRun> {
  const user = `${tag}cu`;
  const mark = await system.mark(user);
  const watcher = await system.connect(user);
  const senders = await mapLimited(
    Array.from({ length: Math.min(SENDERS, o.pairs) }, (_, i) => `${tag}cs${i}`),
    20,
    (u) => system.connect(u),
  );
  const ids = Array.from({ length: o.catchUp }, (_, i) => `${tag}-cu-${i}`);
  const wanted = new Set(ids);
  watcher.onMessage = (id) => {
    if (id !== undefined) wanted.delete(id);
  };
  let fillRate: number;
  try {
    const t0 = performance.now();
    await sendAll(senders, user, ids);
    fillRate = ids.length / ((performance.now() - t0) / 1000);
    const deadline = performance.now() + 180_000;
    while (wanted.size > 0) {
      if (performance.now() > deadline)
        throw new Error(`catch-up fill: ${wanted.size} of ${ids.length} never reached the user's other socket`);
      await sleep(20);
    }
  } finally {
    await Promise.all([watcher, ...senders].map((c) => c.close()));
  }
  const stop = await startMeter(system);
  const runs: CatchUpResult[] = [];
  for (let i = 0; i < o.catchUpRepeats; i++) {
    const r = await system.catchUp(user, mark);
    if (r.messages !== o.catchUp) throw new Error(`catch-up received ${r.messages} messages, expected ${o.catchUp}`);
    runs.push(r);
  }
  return { count: o.catchUp, runs, fillRate, load: await stop() };
}
