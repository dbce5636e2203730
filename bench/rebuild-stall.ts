/**
 * Bench: other users' 1:1 sends while one inbox of 1 000 000 entries has its conversation index
 * rebuilt, on LMDB, three times: with the index correct (the rebuild folds and compares, and
 * writes nothing), with one record off (it patches that row in place), and with every item row
 * lost (it copies the rebuilt index into the engine, switches to it and clears the old one).
 *
 * A send is the two inbox appends of a 1:1 message (the recipient's copy and the sender's)
 * through InboxOwner, as the messaging layer makes them, at a fixed offered rate between 200
 * users who are not the big inbox. Its p99 during each rebuild is compared with its p99
 * unloaded (target ≤ 2×): the sends of a window before and after every rebuild, pooled, since a
 * shared machine's latency drifts within minutes.
 *
 * The big inbox is the conversations bench's (conversations-inbox.ts: 10 000 conversations,
 * built once through the timeline store and cached), copied to a temporary directory so the
 * sends, the damage and the rebuilds leave the cache as it was.
 */
import { cp } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { open, type Database, type Key } from 'lmdb';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { BIG_ENTRIES, BIG_INBOX, openBigInbox } from './conversations-inbox.ts';
import { messageEntry, RUN_ID } from './fixtures.ts';
import { fmtMs, Samples, type BenchResult, type Figure, type LatencySummary } from './stats.ts';
import { tempDir } from './support.ts';

const TARGET_RATIO = 2;
const USERS = 200;
/** Sends started per second, whatever the latency (an open loop: a stall shows as latency, not as fewer samples). */
const SENDS_PER_SECOND = 200;
/** Each unloaded window. */
const UNLOADED_MS = 10_000;
const MAX_SAMPLES = 300_000;
/** The conversation whose record is put off (conversations-inbox.ts: conversation 1 is 1:1). */
const TAMPERED = 'user:p1';

type IndexRows = Database<unknown, Key>;

/** The damage done to the big inbox's index before a rebuild, behind the engine's back. */
const CASES: Array<{ name: string; damage: (rows: IndexRows) => Promise<void> }> = [
  { name: 'index correct', damage: async () => undefined },
  {
    name: 'one record off: patched',
    damage: async (rows) => {
      const key = [BIG_INBOX, 'r', TAMPERED];
      const rec = rows.get(key) as number[] | undefined;
      if (rec === undefined) throw new Error(`no record ${TAMPERED} in the big inbox`);
      await rows.put(
        key,
        rec.map((n, i) => (i === 4 ? n + 1 : n)),
      );
    },
  },
  {
    name: 'every item row lost: copied and switched',
    damage: async (rows) => {
      await rows.transaction(() => {
        for (const key of rows.getKeys({ start: [BIG_INBOX, 'i'], end: [BIG_INBOX, 'i', '\u{10FFFF}'] })) void rows.remove(key);
      });
    },
  },
];

export async function runRebuildStallBench(): Promise<BenchResult> {
  const notes: string[] = [];
  const t0 = performance.now();
  const cached = await openBigInbox();
  await cached.engine.close();
  const tmp = await tempDir('rebuild-stall');
  await cp(cached.dir, tmp.dir, { recursive: true });
  notes.push(`big inbox: ${BIG_ENTRIES} entries; ${cached.origin}; copied in ${fmtMs(performance.now() - t0)}`);
  try {
    const unloadedSamples = new Samples(MAX_SAMPLES);
    const windows: LatencySummary[] = [];
    const during: Array<{ name: string; loaded: LatencySummary }> = [];
    for (const { name, damage } of CASES) {
      await damageIndex(tmp.dir, damage);
      const stack = await openStack(tmp.dir);
      try {
        windows.push(await sendsUntil(stack.send, sleep(UNLOADED_MS), unloadedSamples));
        const started = performance.now();
        const rebuild = stack.engine.conversationRebuilder.rebuildConversations(BIG_INBOX);
        const loaded = await sendsUntil(stack.send, rebuild, new Samples(MAX_SAMPLES));
        const report = await rebuild;
        during.push({ name, loaded });
        notes.push(
          `${name}: ${report.entries} entries, ${report.conversations} conversations, differed ${report.differed} (${report.changedConversations.length} conversations), in ${((performance.now() - started) / 1000).toFixed(1)} s; sends during it ${latency(loaded)}`,
        );
        windows.push(await sendsUntil(stack.send, sleep(UNLOADED_MS), unloadedSamples));
      } finally {
        await stack.close();
      }
    }
    const unloaded = unloadedSamples.summary();
    notes.push(
      `sends: 2 appends each, ${SENDS_PER_SECOND}/s offered, ${USERS} users; unloaded ${latency(unloaded)} (p99 of the windows ${windows.map((w) => fmtMs(w.p99)).join(', ')})`,
    );
    const figure = ({ name, loaded }: (typeof during)[number]): Figure => {
      const ratio = loaded.p99 / unloaded.p99;
      return {
        name: `other users' send p99 while a ${BIG_ENTRIES / 1e6} M-entry inbox rebuilds (LMDB), ${name}`,
        value: `${ratio.toFixed(2)}× unloaded`,
        target: `≤ ${TARGET_RATIO}×`,
        met: ratio <= TARGET_RATIO,
        raw: `unloaded p99 ${fmtMs(unloaded.p99)}`,
        ratio: `during p99 ${fmtMs(loaded.p99)}, max ${fmtMs(loaded.max)}`,
      };
    };
    return { figures: during.map(figure), notes };
  } finally {
    await tmp.remove();
  }
}

let sent = 0;

/** The engine and an InboxOwner over it, warmed up: every sender's and recipient's inbox loaded. */
async function openStack(dir: string): Promise<{ engine: EmbeddedEngine; send: () => Promise<void>; close(): Promise<void> }> {
  const engine = await openEmbeddedEngine({ dir, logger: silentLogger });
  const push = createLocalPushBus({ logger: silentLogger });
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const owner = new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger: silentLogger, epoch });
  await owner.start();
  const send = async (): Promise<void> => {
    const i = sent++;
    const from = `s${i % USERS}`;
    const to = `s${(i * 7 + 1) % USERS}`;
    const appinfo = `rs-${RUN_ID}-${i}`;
    const sendTime = Date.now();
    await Promise.all([
      owner.append({ inbox: inboxKey('bench', to), entries: [messageEntry(appinfo, from, sendTime)] }),
      owner.append({ inbox: inboxKey('bench', from), entries: [{ ...messageEntry(appinfo, to, sendTime), from }] }),
    ]);
  };
  for (let i = 0; i < 2 * USERS; i++) await send();
  return {
    engine,
    send,
    async close() {
      await owner.close();
      await push.close();
      await engine.close();
    },
  };
}

/** Runs `damage` on the big inbox's index rows with the engine closed. */
async function damageIndex(dir: string, damage: (rows: IndexRows) => Promise<void>): Promise<void> {
  const env = open({ path: dir, noSubdir: false, maxDbs: 40 });
  try {
    await damage(env.openDB<unknown, Key>({ name: 'conv_index' }));
  } finally {
    await env.close();
  }
}

/**
 * Starts SENDS_PER_SECOND sends a second until `until` settles and they have finished; adds their
 * latencies to `pooled` and returns this window's alone.
 */
async function sendsUntil(send: () => Promise<void>, until: Promise<unknown>, pooled: Samples): Promise<LatencySummary> {
  const samples = new Samples(MAX_SAMPLES);
  let done = false;
  const stop = () => {
    done = true;
  };
  until.then(stop, stop);
  const inFlight = new Set<Promise<void>>();
  const interval = 1000 / SENDS_PER_SECOND;
  const start = performance.now();
  for (let i = 0; !done; i++) {
    // From when it was due, not when it started: a blocked event loop delays the start too.
    const due = start + i * interval;
    const one = send().then(() => {
      samples.add(performance.now() - due);
      pooled.add(performance.now() - due);
    });
    inFlight.add(one);
    const settled = () => inFlight.delete(one);
    one.then(settled, settled);
    await sleep(Math.max(0, due + interval - performance.now()));
  }
  await Promise.all(inFlight);
  return samples.summary();
}

function latency(s: LatencySummary): string {
  return `n=${s.n}, p50 ${fmtMs(s.p50)}, p99 ${fmtMs(s.p99)}, max ${fmtMs(s.max)}`;
}
