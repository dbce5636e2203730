/**
 * Resident memory per idle socket: the server processes' VmRSS (plus a private store's: Redis
 * holds a subscription per Centrifugo personal channel) before and after N authenticated sockets
 * of distinct users, each ready to receive its user's messages. Warm-up sockets are opened and
 * closed first, as bench/connections.ts does. The shared services of Seqline distributed are
 * left out (other work uses them).
 */
import { mapLimited, openFileLimit } from '../support.ts';
import { settledRss, startMeter, type StepLoad } from './meter.ts';
import type { PeersOptions } from './options.ts';
import type { PeerSystem } from './system.ts';

const WARMUP = 200;
const CONNECT_CONCURRENCY = 100;
/** File descriptors this process needs besides the sockets. */
const FD_HEADROOM = 200;

export interface IdleRun {
  wanted: number;
  open: number;
  before: number;
  after: number;
  perSocket: number;
  load: StepLoad;
}

export async function runIdle(system: PeerSystem, o: PeersOptions, tag: string): Promise<IdleRun> {
  const limit = await openFileLimit();
  const wanted = Math.min(o.idleSockets, Math.floor(limit - FD_HEADROOM));
  const pids = [...system.processes, ...system.stores.filter((s) => !s.shared)].map((p) => p.pid);
  const stop = await startMeter(system);
  const warm = await mapLimited(
    Array.from({ length: WARMUP }, (_, i) => `${tag}iw${i}`),
    CONNECT_CONCURRENCY,
    (u) => system.connect(u),
  );
  await mapLimited(warm, 500, (c) => c.close());
  const before = await settledRss(pids);
  const clients = await mapLimited(
    Array.from({ length: wanted }, (_, i) => `${tag}i${i}`),
    CONNECT_CONCURRENCY,
    (u) => system.connect(u),
  );
  try {
    const after = await settledRss(pids);
    const open = clients.filter((c) => c.isOpen).length;
    return { wanted: o.idleSockets, open, before, after, perSocket: (after - before) / open, load: await stop() };
  } finally {
    await mapLimited(clients, 500, (c) => c.close());
  }
}
