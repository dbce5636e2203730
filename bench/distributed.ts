/**
 * Issue 3's figures, distributed mode, one run on the loopback Cassandra node:
 * 1. appends/s of the CQL TimelineStore driven through an InboxOwner (as a worker does) against
 *    the raw cassandra-driver prepared single-row INSERT rate, same concurrency and duration;
 * 2. 1:1 send → push latency at a fixed open-loop rate through a worker + gateway (children);
 * 3. sync of 200 entries through that gateway, Redis cache hit and miss.
 */
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger, type InboxKey, type NewEntry } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openScyllaStores, TIMELINE_TABLES, type ScyllaStores } from '@seqline/store/scylla';
import { writeShapes } from './cql-write-shapes.ts';
import { firstSend, fmtCpu, PUSH_LOAD_SHAPE, pushLoad, sustained, type LoadResult } from './distributed-push.ts';
import { BENCH_KEYSPACE, disturbances, startDistributedStack, waitForServices, type DistributedStack } from './distributed-stack.ts';
import { messageBody, messageEntry, RUN_ID } from './fixtures.ts';
import { nodeSettled } from './node-background.ts';
import { fmtLatency, fmtMs, fmtRate, fmtRatio, Samples, type BenchResult, type Figure, type LatencySummary } from './stats.ts';
import { schedPolicyOf, servicePid, sleep, timerSlackOf } from './support.ts';
import { closedLoop, CONCURRENCY, Tally } from './closed-loop.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

/**
 * `BENCH_PARTS=store,push,sync,history` (the default) runs a part alone, e.g. while tuning one path;
 * `shapes` (opt-in) adds the driver-only write shapes of bench/cql-write-shapes.ts.
 */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'store,push,sync,history').split(',').map((part) => part.trim()));
const STORE_KEYSPACE = `${BENCH_KEYSPACE}_store`;
const SLICE_MS = 2500;
const ROUNDS = 2;
const BATCH = 10;
const INBOXES = 2000;
const TARGET_RATIO = 0.7;
/** Long-history inboxes of the history part. */
const HISTORY_INBOXES = 256;
const HISTORY_ENTRIES = 4_500;
/** `BENCH_RATES=2000,1000,500`: the open-loop rates tried, in order, until one is sustained. */
const RATES = (process.env.BENCH_RATES ?? '2000,1000,500').split(',').map(Number);
const SYNC_SAMPLES = 300;

/** An InboxOwner as a worker runs one. One scope for every run: each run's owner outranks the last one's claims on the sections. */
async function startOwner(stores: ScyllaStores): Promise<{ owner: InboxOwner; close: () => Promise<void> }> {
  const epoch = await stores.ceilings.nextEpoch('bench-store-owner');
  const push = createLocalPushBus({ logger: silentLogger });
  const owner = new InboxOwner({ timeline: stores.timeline, ceilings: stores.ceilings, push, logger: silentLogger, epoch });
  await owner.start();
  return {
    owner,
    close: async () => {
      await owner.close();
      await push.close();
    },
  };
}

/** The raw INSERT rate of the store part, for the history part's ratio. */
let lastRawRate: number | undefined;

/**
 * Single-entry appends to inboxes with a long history: more appinfos in their dedup window
 * than the 4 096 a writer once held (an active user's after a few weeks). The writer must still
 * append to them without a read. Run last: the prefill leaves the node compacting for a while.
 */
async function historyRate(stores: ScyllaStores, notes: string[]): Promise<void> {
  const { owner, close } = await startOwner(stores);
  let counter = 0;
  const entry = (): NewEntry => messageEntry(`dh-${RUN_ID}-${counter++}`, 'peer', Date.now());
  const inboxes = Array.from({ length: HISTORY_INBOXES }, (_, i) => inboxKey(`h${RUN_ID}`, `u${i}`));
  const tally = new Tally();
  try {
    await Promise.all(
      inboxes.map(async (inbox) => {
        for (let n = 0; n < HISTORY_ENTRIES; n += 300) await owner.append(inbox, Array.from({ length: 300 }, entry));
      }),
    );
    // Written out now, so the measured slice does not pay for the prefill's flush and compactions.
    await flushKeyspace(STORE_KEYSPACE);
    const settled = await nodeSettled(stores.client, 60_000);
    tally.add(await closedLoop(SLICE_MS, (i) => owner.append(inboxes[i % HISTORY_INBOXES] as InboxKey, [entry()])));
    notes.push(`history: prefill of ${HISTORY_INBOXES}×${HISTORY_ENTRIES} entries, flushed, then ${settled}`);
  } finally {
    await close();
  }
  const ratio = lastRawRate === undefined ? '' : `, ${fmtRatio(tally.rate, lastRawRate)} (raw from the store part)`;
  notes.push(`  single-entry appends to those inboxes: ${fmtRate(tally.rate)}${ratio}; CPU per entry ${tally.cpuPerEntry}`);
}

/** `nodetool flush <keyspace>` on the node of scripts/services.sh, when its nodetool is there. */
async function flushKeyspace(keyspace: string): Promise<void> {
  const nodetool = fileURLToPath(new URL('../.services/cassandra/bin/nodetool', import.meta.url));
  await new Promise<void>((resolve) => execFile(nodetool, ['flush', keyspace], { timeout: 60_000 }, () => resolve()));
}

async function emptyStoreTables(client: ScyllaStores['client']): Promise<void> {
  for (const table of ['raw_insert', TIMELINE_TABLES.entries, TIMELINE_TABLES.appinfos, TIMELINE_TABLES.buckets]) {
    await client.execute(`TRUNCATE ${STORE_KEYSPACE}.${table}`);
  }
}

async function storeRates(stores: ScyllaStores, notes: string[]): Promise<Figure[]> {
  const { client } = stores;
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${STORE_KEYSPACE}.raw_insert (inbox text, seq bigint, entry text, PRIMARY KEY (inbox, seq))`,
  );
  // Both kinds start from empty tables: otherwise earlier runs' data decides how much compaction
  // runs during this one (it took up to 2/3 of the node's CPU after a few runs).
  await emptyStoreTables(client);
  // Nor should an earlier run's flushes and compactions (a push or history part, another bench)
  // share the node with the first slices: they cost it up to 20 µs more per row in the first runs
  // after one, for whichever kind they fell on.
  const settled = await nodeSettled(stores.client, 60_000);
  const insert = `INSERT INTO ${STORE_KEYSPACE}.raw_insert (inbox, seq, entry) VALUES (?, ?, ?)`;
  const inboxes: InboxKey[] = Array.from({ length: INBOXES }, (_, i) => inboxKey(`b${RUN_ID}`, `u${i}`));
  const rawSeq = new Array<number>(INBOXES).fill(0);
  let counter = 0;
  const entry = (): NewEntry => messageEntry(`da-${RUN_ID}-${counter++}`, 'peer', Date.now());
  const raw = (i: number) => {
    const k = i % INBOXES;
    return client.execute(insert, [inboxes[k], ++rawSeq[k]!, JSON.stringify({ ...entry(), seq: rawSeq[k] })], { prepare: true });
  };
  const { owner, close } = await startOwner(stores);
  const tallies = { raw: new Tally(), single: new Tally(), batched: new Tally() };
  const latency = new Samples(2_000_000);
  try {
    // An owner's first append to an inbox in its term loads what the store holds and clears the
    // gap its seqs jump over; every later one is the steady state the rates below measure.
    const firstStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < INBOXES) await owner.append(inboxes[next++] as InboxKey, [entry()]);
      }),
    );
    notes.push(
      `  first append of each of ${INBOXES} inboxes (load + gap clear): ${fmtRate(INBOXES / ((performance.now() - firstStarted) / 1000))}`,
    );
    for (let r = 0; r < ROUNDS; r++) {
      await waitForServices('during the store rates');
      tallies.raw.add(await closedLoop(SLICE_MS, raw));
      tallies.single.add(
        await closedLoop(SLICE_MS, async (i) => {
          const t0 = performance.now();
          await owner.append(inboxes[i % INBOXES] as InboxKey, [entry()]);
          latency.add(performance.now() - t0);
        }),
      );
      tallies.batched.add(
        await closedLoop(SLICE_MS, (i) => owner.append(inboxes[i % INBOXES] as InboxKey, Array.from({ length: BATCH }, entry))),
        BATCH,
      );
    }
  } finally {
    await close();
    // And they end empty: their last memtables (about 100 MiB) were otherwise flushed and
    // compacted inside the push part's measured window (seen in all three full runs of session
    // 13). auto_snapshot is off (scripts/services/cassandra.yaml): TRUNCATE drops them unwritten.
    await emptyStoreTables(client);
  }
  lastRawRate = tallies.raw.rate;
  const { raw: rw, single: s, batched: b } = tallies;
  notes.push(
    `store rates: ${ROUNDS} interleaved rounds of ${SLICE_MS / 1000} s per kind, ${CONCURRENCY} ops in flight, ${INBOXES} inboxes, keyspace ${STORE_KEYSPACE} (RF 1, LOCAL_QUORUM)`,
  );
  notes.push(`  before the rates: ${settled}`);
  notes.push(`  failed ops (node unavailable): raw ${rw.errors}, single ${s.errors}, batched ${b.errors}`);
  notes.push(
    `  Cassandra timer slack: ${await timerSlackOf(await servicePid('cassandra'))} (scripts/services.sh sets it, docs/services.md)`,
  );
  notes.push(`  CPU per entry written: raw ${rw.cpuPerEntry}; single ${s.cpuPerEntry}; batched ${b.cpuPerEntry}`);
  notes.push(`  single-entry append latency at ${CONCURRENCY} in flight: ${fmtLatency(latency.summary())}`);
  notes.push(`  batched ${BATCH}/call: ${fmtRate(b.rate / BATCH)} calls/s; vs raw single-row inserts ${fmtRatio(b.rate, rw.rate)}`);
  return [
    {
      name: 'CQL appends/s, single-entry (InboxOwner)',
      value: fmtRate(s.rate),
      target: `≥ ${TARGET_RATIO * 100}% of raw`,
      met: s.rate >= TARGET_RATIO * rw.rate,
      raw: `${fmtRate(rw.rate)} driver INSERT`,
      ratio: fmtRatio(s.rate, rw.rate),
    },
    {
      name: `CQL appends/s, batched ${BATCH}/call`,
      value: fmtRate(b.rate),
      target: '—',
      met: undefined,
      raw: `${fmtRate(rw.rate)} driver INSERT`,
      ratio: fmtRatio(b.rate, rw.rate),
    },
  ];
}

/** Retries a first send until the shards are writable (lease wait-out after a worker starts). */
async function syncLatency(stack: DistributedStack): Promise<{ hit: LatencySummary; miss: LatencySummary; flushed: number }> {
  const sender = await BenchClient.connect(stack.gatewayUrl, await tokenFor(`sy${RUN_ID}s`));
  const reader = await BenchClient.connect(stack.gatewayUrl, await tokenFor(`sy${RUN_ID}r`));
  try {
    await firstSend(sender, `sy${RUN_ID}r`);
    for (let i = 0; i < 300; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          sender.ok('send', { appinfo: `sy-${RUN_ID}-${i + k}`, to: { user: `sy${RUN_ID}r` }, type: 'text', body: messageBody() }),
        ),
      );
    }
    const head = (await reader.ok('sync', { maxSeq: 0, limit: 1 })).reply['headSeq'] as number;
    const from = head - 200;
    const hit = new Samples(SYNC_SAMPLES);
    const miss = new Samples(SYNC_SAMPLES);
    let flushed = 0;
    for (let i = 0; i < 30; i++) await reader.ok('sync', { maxSeq: from, limit: 200 }); // warm-up, fills the cache
    for (let i = 0; i < SYNC_SAMPLES; i++) {
      const { sentAt, reply } = reader.call('sync', { maxSeq: from, limit: 200 });
      const r = await reply;
      if (!r.reply.ok || (r.reply['entries'] as unknown[]).length !== 200) throw new Error(`sync (hit) failed: ${r.text.slice(0, 200)}`);
      hit.add(r.at - sentAt);
      flushed += await stack.flushTimelineCache();
      const m = reader.call('sync', { maxSeq: from, limit: 200 });
      const rm = await m.reply;
      if (!rm.reply.ok || (rm.reply['entries'] as unknown[]).length !== 200)
        throw new Error(`sync (miss) failed: ${rm.text.slice(0, 200)}`);
      miss.add(rm.at - m.sentAt);
      // The miss refilled the cache: the next hit sample reads from it.
    }
    return { hit: hit.summary(), miss: miss.summary(), flushed };
  } finally {
    await sender.close();
    await reader.close();
  }
}

export async function runDistributedBench(): Promise<BenchResult> {
  const notes: string[] = [];
  const figures: Figure[] = [];
  await waitForServices('before the bench');
  if (PARTS.has('store') || PARTS.has('shapes')) {
    // A keyspace of its own: the stack's workers claim the same shard sections under their lease epochs.
    const stores = await openScyllaStores({
      contactPoints: ['127.0.0.1:9042'],
      localDataCenter: 'datacenter1',
      keyspace: STORE_KEYSPACE,
      migrate: true,
    });
    try {
      if (PARTS.has('store')) figures.push(...(await storeRates(stores, notes)));
      if (PARTS.has('shapes')) await writeShapes(stores.client, STORE_KEYSPACE, closedLoop, SLICE_MS, notes);
    } finally {
      await stores.close();
    }
  }
  if (PARTS.has('push') || PARTS.has('sync')) await stackParts(figures, notes);
  if (PARTS.has('history')) {
    const stores = await openScyllaStores({
      contactPoints: ['127.0.0.1:9042'],
      localDataCenter: 'datacenter1',
      keyspace: STORE_KEYSPACE,
      migrate: true,
    });
    try {
      await historyRate(stores, notes);
    } finally {
      await stores.close();
    }
  }
  if (disturbances.length > 0) notes.push(`service disturbances: ${disturbances.join('; ')}`);
  return { figures, notes };
}

/** Push and sync, through a worker and a gateway started as child processes. */
async function stackParts(figures: Figure[], notes: string[]): Promise<void> {
  const stack = await startDistributedStack();
  // For the node's background work only (system_views), not for the load.
  const node = await openScyllaStores({
    contactPoints: ['127.0.0.1:9042'],
    localDataCenter: 'datacenter1',
    keyspace: STORE_KEYSPACE,
    migrate: true,
  });
  try {
    const loads: LoadResult[] = [];
    for (const [k, rate] of (PARTS.has('push') ? RATES : []).entries()) {
      await waitForServices(`before the ${rate} msg/s load`);
      // The store part's flushes and compactions would otherwise land in this window.
      notes.push(`push @ ${rate} msg/s: ${await nodeSettled(node.client, 60_000)} before it`);
      const r = await pushLoad(stack, rate, `d${k}${RUN_ID.slice(-4)}`, node.client);
      loads.push(r);
      if (sustained(r)) break;
    }
    // BENCH_KEEP_MS: keep the stack up that long when a send went unanswered or unstored, to inspect it.
    const keepMs = Number(process.env.BENCH_KEEP_MS ?? 0);
    if (keepMs > 0 && loads.some((r) => r.unanswered + r.unsynced > 0)) {
      process.stderr.write(`keeping namespace ${stack.namespace} (gateway pid ${stack.pids.gateway}) for ${keepMs} ms\n`);
      await sleep(keepMs);
    }
    notes.push(`push: ${PUSH_LOAD_SHAPE}; 1 worker + 1 gateway (children), namespace ${stack.namespace}`);
    const policies = await Promise.all(
      [stack.pids.gateway, stack.pids.worker, await servicePid('cassandra'), await servicePid('redis'), await servicePid('nats')].map(
        schedPolicyOf,
      ),
    );
    notes.push(
      `  scheduling (docs/services.md): gateway ${policies[0]}, worker ${policies[1]}, Cassandra ${policies[2]}, Redis ${policies[3]}, NATS ${policies[4]}; load generator ${await schedPolicyOf(process.pid)}`,
    );
    for (const r of loads) {
      const errs = [...r.errors].map(([c, n]) => `${c}×${n}`).join(', ') || 'none';
      const lost = r.closed.length === 0 ? '' : `, sockets closed under load ${r.closed.length} (${[...new Set(r.closed)].join('; ')})`;
      notes.push(
        `  @ ${r.rate} msg/s: ${r.sent} sent, unanswered ${r.unanswered}${lost}, acknowledged but never pushed ${r.missing} (of which not found by a sync either: ${r.unsynced}), errors ${errs}${sustained(r) ? '' : ' — NOT sustained'}`,
      );
      notes.push(`    CPU µs per message: ${fmtCpu(r.cpu, r.rate)}`);
      notes.push(`    send → push: ${fmtLatency(r.push)}; ${r.growth}`);
      notes.push(`    send → ack:  ${fmtLatency(r.ack)}`);
      notes.push(`    Cassandra in the measured window: ${r.background}`);
      figures.push({
        name: `distributed 1:1 send→push p99 @ ${r.rate} msg/s`,
        value: `${fmtMs(r.push.p99)} (p50 ${fmtMs(r.push.p50)})${sustained(r) ? '' : ', not sustained'}`,
        target: '< 25 ms',
        met: sustained(r) && r.push.p99 < 25,
      });
    }
    if (PARTS.has('sync')) {
      await waitForServices('before the sync samples');
      const sync = await syncLatency(stack);
      notes.push(
        `sync: ${SYNC_SAMPLES} samples each, alternating; miss = all ${stack.namespace}:tl:* keys deleted before the request (${sync.flushed} keys deleted in total)`,
      );
      notes.push(`  hit:  ${fmtLatency(sync.hit)}`);
      notes.push(`  miss: ${fmtLatency(sync.miss)}`);
      figures.push({ name: 'distributed sync 200 p99, Redis hit', value: fmtMs(sync.hit.p99), target: '< 15 ms', met: sync.hit.p99 < 15 });
      figures.push({
        name: 'distributed sync 200 p99, Redis miss',
        value: fmtMs(sync.miss.p99),
        target: '< 15 ms',
        met: sync.miss.p99 < 15,
      });
    }
  } finally {
    await node.close();
    await stack.stop();
  }
}
