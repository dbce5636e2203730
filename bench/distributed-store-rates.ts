/**
 * The store parts of the distributed bench (distributed.ts): appends/s of the CQL TimelineStore
 * driven through an InboxOwner (as a worker does) against the raw cassandra-driver prepared
 * single-row INSERT rate, and single-entry appends to inboxes with a long history.
 */
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger, type InboxKey, type NewEntry } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { TIMELINE_TABLES, type ScyllaStores } from '@seqline/store/scylla';
import { BENCH_KEYSPACE, waitForServices } from './distributed-stack.ts';
import { messageEntry, RUN_ID } from './fixtures.ts';
import { nodeSettled } from './node-background.ts';
import { fmtLatency, fmtRate, fmtRatio, Samples, type Figure } from './stats.ts';
import { servicePid, timerSlackOf } from './support.ts';
import { closedLoop, CONCURRENCY, Tally } from './closed-loop.ts';

export const STORE_KEYSPACE = `${BENCH_KEYSPACE}_store`;
export const SLICE_MS = 2500;
const ROUNDS = 2;
const BATCH = 10;
const INBOXES = 2000;
const TARGET_RATIO = 0.7;
/** Long-history inboxes of the history part. */
const HISTORY_INBOXES = 256;
const HISTORY_ENTRIES = 4_500;

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
export async function historyRate(stores: ScyllaStores, notes: string[]): Promise<void> {
  const { owner, close } = await startOwner(stores);
  let counter = 0;
  const entry = (): NewEntry => messageEntry(`dh-${RUN_ID}-${counter++}`, 'peer', Date.now());
  const inboxes = Array.from({ length: HISTORY_INBOXES }, (_, i) => inboxKey(`h${RUN_ID}`, `u${i}`));
  const tally = new Tally();
  try {
    await Promise.all(
      inboxes.map(async (inbox) => {
        for (let n = 0; n < HISTORY_ENTRIES; n += 300) await owner.append({ inbox, entries: Array.from({ length: 300 }, entry) });
      }),
    );
    // Written out now, so the measured slice does not pay for the prefill's flush and compactions.
    await flushKeyspace(STORE_KEYSPACE);
    const settled = await nodeSettled(stores.client, 60_000);
    tally.add(await closedLoop(SLICE_MS, (i) => owner.append({ inbox: inboxes[i % HISTORY_INBOXES] as InboxKey, entries: [entry()] })));
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

export async function storeRates(stores: ScyllaStores, notes: string[]): Promise<Figure[]> {
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
        while (next < INBOXES) await owner.append({ inbox: inboxes[next++] as InboxKey, entries: [entry()] });
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
          await owner.append({ inbox: inboxes[i % INBOXES] as InboxKey, entries: [entry()] });
          latency.add(performance.now() - t0);
        }),
      );
      tallies.batched.add(
        await closedLoop(SLICE_MS, (i) =>
          owner.append({ inbox: inboxes[i % INBOXES] as InboxKey, entries: Array.from({ length: BATCH }, entry) }),
        ),
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
