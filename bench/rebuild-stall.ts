/**
 * Bench: other users' 1:1 sends while one inbox of 1 000 000 entries has its conversation index
 * rebuilt, on LMDB, twice: first with one record of the index off (the rebuild repairs it: it
 * copies the rebuilt index into the engine, switches and clears the old one), then again (it
 * finds the index correct and writes nothing). A send is the two inbox appends of a 1:1 message (the recipient's copy and
 * the sender's) through InboxOwner, as the messaging layer makes them, at a fixed offered rate
 * between 200 users who are not the big inbox. Its p99 during each rebuild is compared with its
 * p99 unloaded (target ≤ 2×): the sends of windows before, between and after the rebuilds,
 * pooled, since a shared machine's latency drifts within minutes.
 *
 * The big inbox is the conversations bench's (conversations-inbox.ts: 10 000 conversations,
 * built once through the timeline store and cached), copied to a temporary directory so the
 * sends and the rebuild leave the cache as it was.
 */
import { cp } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { open, type Key } from 'lmdb';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger, type ConversationRebuildReport } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { BIG_ENTRIES, BIG_INBOX, openBigInbox } from './conversations-inbox.ts';
import { messageEntry, RUN_ID } from './fixtures.ts';
import { fmtMs, Samples, type BenchResult, type LatencySummary } from './stats.ts';
import { tempDir } from './support.ts';

const TARGET_RATIO = 2;
const USERS = 200;
/** Sends started per second, whatever the latency (an open loop: a stall shows as latency, not as fewer samples). */
const SENDS_PER_SECOND = 200;
/** Each of the three unloaded windows. */
const UNLOADED_MS = 10_000;
const MAX_SAMPLES = 200_000;
/** The conversation whose record is put off before the first rebuild (conversations-inbox.ts: conversation 1 is 1:1). */
const TAMPERED = 'user:p1';

export async function runRebuildStallBench(): Promise<BenchResult> {
  const notes: string[] = [];
  const t0 = performance.now();
  const cached = await openBigInbox();
  await cached.engine.close();
  const tmp = await tempDir('rebuild-stall');
  await cp(cached.dir, tmp.dir, { recursive: true });
  notes.push(`big inbox: ${BIG_ENTRIES} entries; ${cached.origin}; copied and opened in ${fmtMs(performance.now() - t0)}`);
  await tamperOneRecord(tmp.dir);

  const engine = await openEmbeddedEngine({ dir: tmp.dir, logger: silentLogger });
  const push = createLocalPushBus({ logger: silentLogger });
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const owner = new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger: silentLogger, epoch });
  await owner.start();
  let n = 0;
  const send = async (): Promise<void> => {
    const i = n++;
    const from = `s${i % USERS}`;
    const to = `s${(i * 7 + 1) % USERS}`;
    const appinfo = `rs-${RUN_ID}-${i}`;
    const sendTime = Date.now();
    await Promise.all([
      owner.append(inboxKey('bench', to), [messageEntry(appinfo, from, sendTime)]),
      owner.append(inboxKey('bench', from), [{ ...messageEntry(appinfo, to, sendTime), from }]),
    ]);
  };
  try {
    for (let i = 0; i < 2 * USERS; i++) await send(); // every inbox exists, its head and index loaded
    const unloadedSamples = new Samples(MAX_SAMPLES);
    const windows = [await sendsUntil(send, sleep(UNLOADED_MS), unloadedSamples)];
    const rebuilds: Array<{ loaded: LatencySummary; report: ConversationRebuildReport }> = [];
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      const rebuild = engine.conversationRebuilder.rebuildConversations(BIG_INBOX);
      const loaded = await sendsUntil(send, rebuild, new Samples(MAX_SAMPLES));
      const report = await rebuild;
      rebuilds.push({ loaded, report });
      notes.push(
        `rebuild ${i + 1}: ${report.entries} entries, ${report.conversations} conversations, differed ${report.differed} (${report.changedConversations.join(', ')}), in ${((performance.now() - started) / 1000).toFixed(1)} s; sends during it ${latency(loaded)}`,
      );
      windows.push(await sendsUntil(send, sleep(UNLOADED_MS), unloadedSamples));
    }
    const unloaded = unloadedSamples.summary();
    notes.push(
      `sends: 2 appends each, ${SENDS_PER_SECOND}/s offered, ${USERS} users; unloaded ${latency(unloaded)} (p99 of the windows ${windows.map((w) => fmtMs(w.p99)).join(', ')})`,
    );
    const figure = ({ loaded, report }: (typeof rebuilds)[number]) => {
      const ratio = loaded.p99 / unloaded.p99;
      return {
        name: `other users' send p99 while a ${BIG_ENTRIES / 1e6} M-entry inbox rebuilds (LMDB), ${report.differed ? 'index repaired' : 'index found correct'}`,
        value: `${ratio.toFixed(2)}× unloaded`,
        target: `≤ ${TARGET_RATIO}×`,
        met: ratio <= TARGET_RATIO,
        raw: `unloaded p99 ${fmtMs(unloaded.p99)}`,
        ratio: `during p99 ${fmtMs(loaded.p99)}, max ${fmtMs(loaded.max)}`,
      };
    };
    return { figures: rebuilds.map(figure), notes };
  } finally {
    await owner.close();
    await push.close();
    await engine.close();
    await tmp.remove();
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
    const sent = send().then(() => {
      samples.add(performance.now() - due);
      pooled.add(performance.now() - due);
    });
    inFlight.add(sent);
    const settled = () => inFlight.delete(sent);
    sent.then(settled, settled);
    await sleep(Math.max(0, due + interval - performance.now()));
  }
  await Promise.all(inFlight);
  return samples.summary();
}

/** Puts one record of the big inbox's index off (unread + 1), behind the engine's back, so that a rebuild repairs it. */
async function tamperOneRecord(dir: string): Promise<void> {
  const env = open({ path: dir, noSubdir: false, maxDbs: 40 });
  try {
    const rows = env.openDB<number[], Key>({ name: 'conv_index' });
    const key = [BIG_INBOX, 'r', TAMPERED];
    const rec = rows.get(key);
    if (rec === undefined) throw new Error(`no record ${TAMPERED} in the big inbox`);
    await rows.put(
      key,
      rec.map((n, i) => (i === 4 ? n + 1 : n)),
    );
  } finally {
    await env.close();
  }
}

function latency(s: LatencySummary): string {
  return `n=${s.n}, p50 ${fmtMs(s.p50)}, p99 ${fmtMs(s.p99)}, max ${fmtMs(s.max)}`;
}
