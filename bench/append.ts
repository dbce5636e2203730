/**
 * Bench 1: durable appends/s through InboxOwner on the embedded LMDB engine, against the raw
 * lmdb-js put rate of equivalent values on the same disk in the same run.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { open, type Database } from 'lmdb';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger, type Entry, type InboxKey, type NewEntry } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { messageEntry, RUN_ID } from './fixtures.ts';
import { fmtLatency, fmtRate, fmtRatio, Samples, type BenchResult } from './stats.ts';
import { tempDir } from './support.ts';

const TARGET = 50_000;
const INBOXES = 1000;
const IN_FLIGHT_ENTRIES = 2000;
const BATCH = 25;
const ROUNDS = 3;
const SLICE_MS = 1200;
/** Bound on ops of any phase, whatever the machine does. */
const MAX_OPS = 5_000_000;

interface PumpResult {
  ops: number;
  elapsedMs: number;
}

/**
 * Closed loop with bounded concurrency: keeps `maxInFlight` ops outstanding until the deadline,
 * then waits for the last ones. A failed op fails the bench (broken setup, not a figure).
 */
function pump(durationMs: number, maxInFlight: number, op: (i: number) => Promise<unknown>, latency?: Samples): Promise<PumpResult> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const deadline = start + durationMs;
    let inFlight = 0;
    let issued = 0;
    let done = 0;
    let failure: { error: unknown } | undefined;
    const settle = () => {
      const over = failure !== undefined || issued >= MAX_OPS || performance.now() >= deadline;
      if (!over) return issue();
      if (inFlight > 0) return;
      if (failure) reject(failure.error);
      else resolve({ ops: done, elapsedMs: performance.now() - start });
    };
    const issue = () => {
      while (inFlight < maxInFlight && issued < MAX_OPS && failure === undefined && performance.now() < deadline) {
        const i = issued++;
        inFlight++;
        const t0 = performance.now();
        op(i).then(
          () => {
            inFlight--;
            done++;
            latency?.add(performance.now() - t0);
            settle();
          },
          (error: unknown) => {
            inFlight--;
            failure ??= { error };
            settle();
          },
        );
      }
    };
    issue();
  });
}

const inboxes: InboxKey[] = Array.from({ length: INBOXES }, (_, i) => inboxKey('default', `u${i}`));
const inboxOf = (i: number) => inboxes[i % INBOXES] as InboxKey;
let appinfoCounter = 0;
const nextEntry = (): NewEntry => messageEntry(`ap-${RUN_ID}-${appinfoCounter++}`, 'peer', Date.now());

/** An InboxOwner on a fresh embedded engine, as the embedded server composes it. */
async function openOwner(dir: string) {
  const engine = await openEmbeddedEngine({ dir, logger: silentLogger });
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const push = createLocalPushBus({ logger: silentLogger });
  const owner = new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger: silentLogger, epoch });
  await owner.start();
  return {
    owner,
    async close() {
      await owner.close();
      await push.close();
      await engine.close();
    },
  };
}

/**
 * The raw limit: lmdb-js async puts, which lmdb-js batches into one async transaction per
 * turn, with the same bounds and durability as our side — at most IN_FLIGHT_ENTRIES entries
 * outstanding, each op resolved once `flushed` (fsync'd), same environment options. Values are
 * the same Entry objects, msgpack-encoded by lmdb-js as the engine does. An op writes `run`
 * consecutive entries of one inbox, like one append call of `run` entries (page locality
 * decides how many pages each commit writes, so it must match). `keysPerEntry` 1 is a bare put;
 * 3 writes what an inbox append writes (entry, appinfo index, head).
 */
function openRaw(dir: string) {
  const env = open({ path: dir, noSubdir: false, maxDbs: 8, mapSize: 256 * 1024 * 1024 });
  const entries: Database<Entry, [string, number]> = env.openDB({ name: 'entries' });
  const appinfos: Database<number, [string, string]> = env.openDB({ name: 'appinfos' });
  const heads: Database<number, string> = env.openDB({ name: 'heads' });
  const seqs = new Map<string, number>();
  const op = (i: number, run: number, keysPerEntry: 1 | 3): Promise<unknown> => {
    const inbox = inboxOf(i);
    let seq = seqs.get(inbox) ?? 0;
    let last: Promise<boolean> | undefined;
    for (let k = 0; k < run; k++) {
      const entry: Entry = { ...nextEntry(), seq: ++seq };
      last = entries.put([inbox, seq], entry);
      if (keysPerEntry === 3) void appinfos.put([inbox, entry.appinfo], seq);
    }
    seqs.set(inbox, seq);
    if (keysPerEntry === 3) last = heads.put(inbox, seq);
    return (last ?? Promise.resolve(true)).then(() => env.flushed);
  };
  return {
    slice(ms: number, run: number, keysPerEntry: 1 | 3): Promise<PumpResult> {
      return pump(ms, IN_FLIGHT_ENTRIES / run, (i) => op(i, run, keysPerEntry));
    },
    async close() {
      await env.flushed;
      await env.close();
    },
  };
}

/** Sums slices of one kind across rounds: entries per second over the time they ran. */
class Tally {
  entries = 0;
  ms = 0;
  add(r: PumpResult, entriesPerOp = 1): void {
    this.entries += r.ops * entriesPerOp;
    this.ms += r.elapsedMs;
  }
  get rate(): number {
    return this.entries / (this.ms / 1000);
  }
}

export async function runAppendBench(): Promise<BenchResult> {
  const tmp = await tempDir('append');
  const notes: string[] = [];
  const ours = await openOwner(join(tmp.dir, 'owner'));
  const raw = openRaw(join(tmp.dir, 'raw'));
  try {
    const { owner } = ours;
    const single = (i: number) => owner.append({ inbox: inboxOf(i), entries: [nextEntry()] });
    const batch = (i: number) => owner.append({ inbox: inboxOf(i), entries: Array.from({ length: BATCH }, nextEntry) });
    // Warm-up: JIT, B-tree pages, every inbox's head cached once.
    await pump(1000, IN_FLIGHT_ENTRIES, single);
    await raw.slice(500, 1, 3);

    // Disk latency on a VM drifts by 2× within a minute: interleave short slices of every
    // kind so ours and raw see the same disk, instead of one long phase each.
    const tallies = {
      single: new Tally(),
      batched: new Tally(),
      raw1: new Tally(),
      raw3: new Tally(),
      rawBatch1: new Tally(),
      rawBatch3: new Tally(),
    };
    const latency = new Samples(2_000_000);
    for (let round = 0; round < ROUNDS; round++) {
      tallies.single.add(await pump(SLICE_MS, IN_FLIGHT_ENTRIES, single, latency));
      tallies.batched.add(await pump(SLICE_MS, IN_FLIGHT_ENTRIES / BATCH, batch), BATCH);
      tallies.raw1.add(await raw.slice(SLICE_MS, 1, 1));
      tallies.raw3.add(await raw.slice(SLICE_MS, 1, 3));
      tallies.rawBatch1.add(await raw.slice(SLICE_MS, BATCH, 1), BATCH);
      tallies.rawBatch3.add(await raw.slice(SLICE_MS, BATCH, 3), BATCH);
    }
    const { single: s, batched: b, raw1, raw3, rawBatch1, rawBatch3 } = tallies;
    notes.push(`${ROUNDS} interleaved rounds of ${SLICE_MS / 1000} s per kind; ${INBOXES} inboxes; ${IN_FLIGHT_ENTRIES} entries in flight`);
    notes.push(`single-entry: ${s.entries} appends; latency under that load: ${fmtLatency(latency.summary())}`);
    notes.push(`batched: ${b.entries / BATCH} calls × ${BATCH} entries (${IN_FLIGHT_ENTRIES / BATCH} calls in flight)`);
    notes.push(`raw: lmdb-js async puts (auto-batched transactions), ${IN_FLIGHT_ENTRIES} entries in flight, each op awaited to flushed`);
    notes.push(`  1 entry per op:  1 key per entry ${fmtRate(raw1.rate)}, 3 keys per entry (an append's write set) ${fmtRate(raw3.rate)}`);
    notes.push(`  ${BATCH} entries per op: 1 key per entry ${fmtRate(rawBatch1.rate)}, 3 keys per entry ${fmtRate(rawBatch3.rate)}`);
    notes.push(`  ours vs. the 3-key raw: single ${fmtRatio(s.rate, raw3.rate)}, batched ${fmtRatio(b.rate, rawBatch3.rate)}`);
    return {
      figures: [
        {
          name: 'appends/s, single-entry (InboxOwner, LMDB)',
          value: fmtRate(s.rate),
          target: `≥ ${fmtRate(TARGET)}`,
          met: s.rate >= TARGET,
          raw: `${fmtRate(raw1.rate)} lmdb put`,
          ratio: fmtRatio(s.rate, raw1.rate),
        },
        {
          name: `appends/s, batched ${BATCH}/call`,
          value: fmtRate(b.rate),
          target: `≥ ${fmtRate(TARGET)}`,
          met: b.rate >= TARGET,
          raw: `${fmtRate(rawBatch1.rate)} lmdb put ×${BATCH}`,
          ratio: fmtRatio(b.rate, rawBatch1.rate),
        },
      ],
      notes,
    };
  } finally {
    await ours.close();
    await raw.close();
    await tmp.remove();
  }
}
