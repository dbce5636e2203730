/**
 * Bench: the conversation index on LMDB (issue #26). Each figure against a raw layer of the
 * same run:
 * - appends/s through InboxOwner with the index against the same engine without it, at 1 and
 *   at 64 and 256 appends in flight (interleaved slices, fresh directories);
 * - `conversations` (list of 50; list of 50 + the last 20 messages of each) on an inbox of
 *   10 000 conversations and 1 000 000 entries, against reading as many entries off the log;
 * - a fresh device's bootstrap of that inbox against replaying it by sync from seq 0.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger, type InboxKey, type NewEntry } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { BIG_CONVERSATIONS, BIG_ENTRIES, BIG_INBOX, openBigInbox } from './conversations-inbox.ts';
import { messageBody, RUN_ID } from './fixtures.ts';
import { fmtMs, fmtRate, fmtRatio, median, Samples, type BenchResult, type Figure } from './stats.ts';
import { tempDir } from './support.ts';

const INBOXES = 1000;
const PEERS = 10;
const IN_FLIGHT = [1, 64, 256];
const ROUNDS = 3;
const SLICE_MS = 1500;
const APPEND_TARGET = 0.9;
const LIST_TARGET_MS = 5;
const BOOTSTRAP_TARGET = 100;
const LIST_LIMIT = 50;
const LAST_MESSAGES = 20;
const READ_SAMPLES = 2000;
/** A v1 sync page (protocol.md: sync limit). */
const SYNC_PAGE = 1000;

let counter = 0;
/** A 1:1 message in inbox i % INBOXES: from one of its peers, or (one in four) its owner's reply. */
function nextAppend(): { inbox: InboxKey; entry: NewEntry } {
  const i = counter++;
  const user = `u${i % INBOXES}`;
  const peer = `p${Math.floor(i / INBOXES) % PEERS}`;
  const own = Math.floor(i / (INBOXES * PEERS)) % 4 === 3;
  const entry: NewEntry = {
    kind: 'msg',
    appinfo: `cv-${RUN_ID}-${i}`,
    conv: { type: 'user', id: peer },
    from: own ? user : peer,
    sendTime: Date.now(),
    type: 'text',
    body: messageBody(),
  };
  return { inbox: inboxKey('bench', user), entry };
}

async function openOwner(dir: string, indexConversations: boolean) {
  const engine = await openEmbeddedEngine({ dir, logger: silentLogger, indexConversations });
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const push = createLocalPushBus({ logger: silentLogger });
  const owner = new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger: silentLogger, epoch });
  await owner.start();
  return {
    append: () => {
      const { inbox, entry } = nextAppend();
      return owner.append({ inbox, entries: [entry] });
    },
    async close() {
      await owner.close();
      await push.close();
      await engine.close();
    },
  };
}

/** Closed loop: `inFlight` appends outstanding for `ms`; appends/s over the slice. */
async function slice(ms: number, inFlight: number, op: () => Promise<unknown>): Promise<{ ops: number; ms: number }> {
  const start = performance.now();
  const end = start + ms;
  let ops = 0;
  const lane = async () => {
    while (performance.now() < end) {
      await op();
      ops++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return { ops, ms: performance.now() - start };
}

async function appendFigures(notes: string[]): Promise<Figure[]> {
  const tmp = await tempDir('conversations');
  const indexed = await openOwner(join(tmp.dir, 'indexed'), true);
  const bare = await openOwner(join(tmp.dir, 'bare'), false);
  try {
    await slice(1000, 256, indexed.append);
    await slice(1000, 256, bare.append);
    const figures: Figure[] = [];
    for (const inFlight of IN_FLIGHT) {
      const ratios: number[] = [];
      let withIndex = 0;
      let without = 0;
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which goes first: disk latency drifts within a minute.
        const a = round % 2 === 0 ? await slice(SLICE_MS, inFlight, indexed.append) : undefined;
        const b = await slice(SLICE_MS, inFlight, bare.append);
        const c = a ?? (await slice(SLICE_MS, inFlight, indexed.append));
        const ours = c.ops / (c.ms / 1000);
        const raw = b.ops / (b.ms / 1000);
        withIndex += ours / ROUNDS;
        without += raw / ROUNDS;
        ratios.push(ours / raw);
      }
      const ratio = median(ratios);
      notes.push(
        `${inFlight} in flight: ratio per round ${ratios.map((r) => r.toFixed(2)).join(', ')} (with index ${fmtRate(withIndex)}, without ${fmtRate(without)})`,
      );
      figures.push({
        name: `appends/s with the index, ${inFlight} in flight`,
        value: fmtRate(withIndex),
        target: `≥ ${APPEND_TARGET}× without`,
        met: ratio >= APPEND_TARGET,
        raw: `${fmtRate(without)} without index`,
        ratio: `${ratio.toFixed(2)}× (median of ${ROUNDS})`,
      });
    }
    notes.push(
      `appends: ${INBOXES} inboxes × ${PEERS} peers, 1:1 messages, one in four the owner's reply; ${ROUNDS} rounds of ${SLICE_MS} ms`,
    );
    return figures;
  } finally {
    await indexed.close();
    await bare.close();
    await tmp.remove();
  }
}

async function timeEach(n: number, op: () => Promise<unknown>): Promise<Samples> {
  const samples = new Samples(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await op();
    samples.add(performance.now() - t0);
  }
  return samples;
}

async function readFigures(notes: string[]): Promise<Figure[]> {
  const t0 = performance.now();
  const { engine, origin } = await openBigInbox();
  notes.push(
    `big inbox: ${BIG_CONVERSATIONS} conversations, ${BIG_ENTRIES} entries; ${origin} (opened in ${fmtMs(performance.now() - t0)})`,
  );
  try {
    const { conversations, timeline } = engine;
    const head = await timeline.headSeq(BIG_INBOX);
    const list = () => conversations.listConversations({ inbox: BIG_INBOX, limit: LIST_LIMIT });
    const bootstrap = async () => {
      const page = await list();
      const last = await Promise.all(
        page.convs.map((c) => conversations.conversationEntries({ inbox: BIG_INBOX, conv: c.conv, limit: LAST_MESSAGES })),
      );
      return { page, last, headSeq: await conversations.headSeq(BIG_INBOX) };
    };
    const encodedBootstrap = async () => JSON.stringify(await bootstrap());
    const rawList = () => timeline.readBefore({ inbox: BIG_INBOX, beforeSeq: head + 1, limit: LIST_LIMIT });
    const rawBootstrap = () => timeline.readBefore({ inbox: BIG_INBOX, beforeSeq: head + 1, limit: LIST_LIMIT * (LAST_MESSAGES + 1) });
    await timeEach(200, encodedBootstrap);
    await timeEach(200, rawBootstrap);
    const listS = (await timeEach(READ_SAMPLES, list)).summary();
    const rawListS = (await timeEach(READ_SAMPLES, rawList)).summary();
    const bootS = (await timeEach(READ_SAMPLES / 4, bootstrap)).summary();
    const rawBootS = (await timeEach(READ_SAMPLES / 4, rawBootstrap)).summary();
    const encS = (await timeEach(READ_SAMPLES / 4, encodedBootstrap)).summary();

    // Replay: what a fresh device does without the index, sync pages of 1000 from seq 0.
    const replay = async () => {
      const t = performance.now();
      let after = 0;
      let bytes = 0;
      for (;;) {
        const entries = await timeline.readAfter({ inbox: BIG_INBOX, afterSeq: after, limit: SYNC_PAGE });
        if (entries.length === 0) break;
        bytes += JSON.stringify({ op: 'sync', entries }).length;
        after = (entries[entries.length - 1] as { seq: number }).seq;
      }
      return { ms: performance.now() - t, bytes };
    };
    const replays = [await replay(), await replay()];
    const replayMs = median(replays.map((r) => r.ms));
    const sample = await bootstrap();
    const bootBytes = JSON.stringify(sample).length;
    notes.push(
      `list of ${LIST_LIMIT}: p50 ${fmtMs(listS.p50)}, p99 ${fmtMs(listS.p99)}; log read of ${LIST_LIMIT} entries p50 ${fmtMs(rawListS.p50)}, p99 ${fmtMs(rawListS.p99)}`,
    );
    notes.push(
      `list + last ${LAST_MESSAGES}: p50 ${fmtMs(bootS.p50)}, p99 ${fmtMs(bootS.p99)}; with JSON encoding p50 ${fmtMs(encS.p50)}, p99 ${fmtMs(encS.p99)} (${(bootBytes / 1024).toFixed(0)} KiB); log read of ${LIST_LIMIT * (LAST_MESSAGES + 1)} entries p50 ${fmtMs(rawBootS.p50)}, p99 ${fmtMs(rawBootS.p99)}`,
    );
    notes.push(
      `replay from seq 0 in sync pages of ${SYNC_PAGE} (read + JSON): ${replays.map((r) => fmtMs(r.ms)).join(', ')}; ${((replays[0]?.bytes ?? 0) / 1024 / 1024).toFixed(0)} MiB of sync answers`,
    );
    return [
      {
        name: `conversations p99, limit ${LIST_LIMIT} (10k convs, 1M entries)`,
        value: fmtMs(listS.p99),
        target: `< ${LIST_TARGET_MS} ms`,
        met: listS.p99 < LIST_TARGET_MS,
        raw: `${fmtMs(rawListS.p99)} log read ×${LIST_LIMIT}`,
        ratio: fmtRatio(listS.p99, rawListS.p99),
      },
      {
        name: `conversations p99, limit ${LIST_LIMIT} + lastMessages ${LAST_MESSAGES}`,
        value: fmtMs(bootS.p99),
        target: `< ${LIST_TARGET_MS} ms`,
        met: bootS.p99 < LIST_TARGET_MS,
        raw: `${fmtMs(rawBootS.p99)} log read ×${LIST_LIMIT * (LAST_MESSAGES + 1)}`,
        ratio: fmtRatio(bootS.p99, rawBootS.p99),
      },
      {
        name: 'fresh-device bootstrap vs replay from seq 0',
        value: `${fmtMs(encS.p50)} (p50, with JSON)`,
        target: `≥ ${BOOTSTRAP_TARGET}× faster`,
        met: replayMs / encS.p50 >= BOOTSTRAP_TARGET,
        raw: `${fmtMs(replayMs)} replay`,
        ratio: `${(replayMs / encS.p50).toFixed(0)}× faster`,
      },
    ];
  } finally {
    await engine.close();
  }
}

export async function runConversationsBench(): Promise<BenchResult> {
  const notes: string[] = [];
  const parts = (process.env['BENCH_PARTS'] ?? 'append,read').split(',');
  const figures: Figure[] = [];
  if (parts.includes('append')) figures.push(...(await appendFigures(notes)));
  if (parts.includes('read')) figures.push(...(await readFigures(notes)));
  return { figures, notes };
}
