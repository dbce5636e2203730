/**
 * Bench 5: resident memory per idle, authenticated WebSocket. The server (`npm start`) runs in a
 * child process so the clients' own memory is not counted; its VmRSS is read before and after
 * CONNECTIONS sockets of distinct users are opened. Raw limit: the same measurement against a
 * bare uWebSockets.js server (the transport's own cost per socket).
 */
import { join } from 'node:path';
import { fmtBytes, fmtRatio, median, type BenchResult } from './stats.ts';
import { mapLimited, openFileLimit, rssOf, sleep, startRawChild, startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const TARGET_BYTES = 8 * 1024;
const WANTED = 5000;
const WARMUP_CONNECTIONS = 200;
const CONNECT_CONCURRENCY = 100;
/** File descriptors this process needs besides the sockets (stdio, LMDB, pipes, tsx). */
const FD_HEADROOM = 200;

/** Median of a few VmRSS readings, spaced out: one reading can land mid-GC. */
async function settledRss(pid: number): Promise<number> {
  await sleep(1500);
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(await rssOf(pid));
    await sleep(200);
  }
  return median(readings);
}

interface RssResult {
  before: number;
  after: number;
  open: number;
  perConnection: number;
}

async function measure(server: ChildServer, users: string[], connect: (user: string) => Promise<BenchClient>): Promise<RssResult> {
  // Warm-up: first-use allocations (JIT of the upgrade path, pools, maps) are not per-socket.
  const warm = await mapLimited(users.slice(0, WARMUP_CONNECTIONS), CONNECT_CONCURRENCY, (u) => connect(`warm-${u}`));
  await Promise.all(warm.map((c) => c.close()));
  const before = await settledRss(server.pid);
  const clients = await mapLimited(users, CONNECT_CONCURRENCY, connect);
  const after = await settledRss(server.pid);
  const open = clients.filter((c) => c.isOpen).length;
  await mapLimited(clients, 500, (c) => c.close());
  return { before, after, open, perConnection: (after - before) / open };
}

export async function runConnectionsBench(): Promise<BenchResult> {
  const tmp = await tempDir('conn');
  const notes: string[] = [];
  const fdLimit = await openFileLimit();
  // One fd per client socket here; the child has the same limit and one fd per server socket.
  const count = Math.min(WANTED, Math.floor(fdLimit - FD_HEADROOM - WARMUP_CONNECTIONS));
  if (count < WANTED) notes.push(`open-file limit ${fdLimit}: measuring ${count} connections instead of ${WANTED} (raise with ulimit -n)`);
  const users = Array.from({ length: count }, (_, i) => `conn${i}`);
  let server: ChildServer | undefined;
  let rawServer: ChildServer | undefined;
  try {
    // Tokens first: signing is not what we measure, and it keeps the connect burst short.
    const tokens = new Map<string, string>();
    for (const u of [...users, ...users.slice(0, WARMUP_CONNECTIONS).map((u) => `warm-${u}`)]) tokens.set(u, await tokenFor(u));
    server = await startSeqlineChild(join(tmp.dir, 'server'));
    const url = server.url;
    const ours = await measure(server, users, (u) => BenchClient.connect(url, tokens.get(u)));
    await server.stop();
    server = undefined;

    rawServer = await startRawChild();
    const rawUrl = rawServer.url;
    const raw = await measure(rawServer, users, (u) => BenchClient.connect(`${rawUrl}?user=${u}`));

    notes.push(
      `open-file limit ${fdLimit}; ${count} idle sockets of distinct users, ${WARMUP_CONNECTIONS} warm-up sockets opened and closed first`,
    );
    notes.push(
      `ours: VmRSS ${fmtBytes(ours.before)} → ${fmtBytes(ours.after)} with ${ours.open} open: ${fmtBytes(ours.perConnection)} per connection`,
    );
    notes.push(
      `raw (bare uWS): VmRSS ${fmtBytes(raw.before)} → ${fmtBytes(raw.after)} with ${raw.open} open: ${fmtBytes(raw.perConnection)} per connection`,
    );
    if (ours.open < count) notes.push(`${count - ours.open} of our sockets were closed by the server before the second reading`);
    return {
      figures: [
        {
          name: `RSS per idle WebSocket (${ours.open} open)`,
          value: fmtBytes(ours.perConnection),
          target: `< ${fmtBytes(TARGET_BYTES)}`,
          met: ours.open === count && ours.perConnection < TARGET_BYTES,
          raw: `${fmtBytes(raw.perConnection)} bare uWS`,
          ratio: fmtRatio(ours.perConnection, raw.perConnection),
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
