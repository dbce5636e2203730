/**
 * Issue #26's figures, distributed mode, on the loopback Cassandra node:
 * 1. appends/s through the CQL timeline store with the conversation index against the same
 *    store with it off (`indexConversations: false`), one inbox in sequence and 100 inboxes at
 *    once, interleaved rounds (the raw layer is the store without the index);
 * 2. `listConversations` limit 50 on an inbox of 10 000 conversations and BENCH_CONV_ENTRIES
 *    entries (default 1 000 000), p50/p99, against a bare driver read of the same 51 list rows;
 * 3. a fresh device's bootstrap of that inbox (headSeq, list 50, the last 20 messages of each, as
 *    the `conversations` op does) against replaying it by readAfter pages of 1 000 from seq 0.
 * `BENCH_CONV_PARTS=append,list` (the default) runs a part alone.
 */
import { performance } from 'node:perf_hooks';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inboxKey, type Entry, type InboxKey } from '@seqline/core';
import { openScyllaStores, type ScyllaStores } from '@seqline/store/scylla';
import { openCqlBigInbox, type CqlBigInbox } from './conversations-cql-inbox.ts';
import { BENCH_KEYSPACE, waitForServices } from './distributed-stack.ts';
import { messageBody, RUN_ID } from './fixtures.ts';
import { nodeSettled } from './node-background.ts';
import { fmtLatency, fmtMs, fmtRate, Samples, type BenchResult, type Figure } from './stats.ts';
import { mapLimited } from './support.ts';

const PARTS = new Set((process.env.BENCH_CONV_PARTS ?? 'append,list').split(',').map((part) => part.trim()));
const KEYSPACE = `${BENCH_KEYSPACE}_convs`;
const BIG_ENTRIES = Number(process.env.BENCH_CONV_ENTRIES ?? 1_000_000);
const ROUNDS = 2;
const SEQUENTIAL_APPENDS = 2_000;
const INBOXES = 100;
const APPENDS_PER_INBOX = 20;
const PEERS = 20;
const LIST_SAMPLES = 400;
const BOOTSTRAP_SAMPLES = 100;
const TARGET_RATIO = 0.9;
const TARGET_LIST_P99_MS = 15;
const TARGET_BOOTSTRAP_SPEEDUP = 100;
const SELF = 'me';

function open(indexConversations: boolean): Promise<ScyllaStores> {
  return openScyllaStores({
    contactPoints: ['127.0.0.1:9042'],
    localDataCenter: 'datacenter1',
    keyspace: KEYSPACE,
    migrate: true,
    indexConversations,
  });
}

/** A chat among PEERS peers, one message in five sent by the owner (which reads the chat). */
function chatEntry(seq: number, tag: string): Entry {
  const peer = `p${seq % PEERS}`;
  const from = seq % 5 === 0 ? SELF : peer;
  return {
    seq,
    kind: 'msg',
    appinfo: `${tag}-${seq}`,
    conv: { type: 'user', id: peer },
    from,
    sendTime: Date.now(),
    type: 'text',
    body: messageBody(),
  };
}

class Tally {
  appends = 0;
  ms = 0;
  get rate(): number {
    return this.appends / (this.ms / 1000);
  }
}

/**
 * `count` single-entry appends to each of `inboxes`, the inboxes at once, each in sequence, after
 * `from` - 1 unmeasured ones (one per peer: the steady state of an inbox whose chats exist).
 */
async function appendRun(stores: ScyllaStores, inboxes: InboxKey[], count: number, tag: string, latency: Samples): Promise<number> {
  const from = PEERS + 1;
  await Promise.all(
    inboxes.map((inbox) => stores.timeline.append({ inbox, entries: Array.from({ length: PEERS }, (_, i) => chatEntry(i + 1, tag)) })),
  );
  const t0 = performance.now();
  await Promise.all(
    inboxes.map(async (inbox) => {
      for (let seq = from; seq < from + count; seq++) {
        const a0 = performance.now();
        await stores.timeline.append({ inbox, entries: [chatEntry(seq, tag)] });
        latency.add(performance.now() - a0);
      }
    }),
  );
  return performance.now() - t0;
}

async function appendRates(indexed: ScyllaStores, plain: ScyllaStores, notes: string[]): Promise<Figure[]> {
  const kinds = { indexed, plain } as const;
  const tallies = { sequential: { indexed: new Tally(), plain: new Tally() }, concurrent: { indexed: new Tally(), plain: new Tally() } };
  const latency = { indexed: new Samples(100_000), plain: new Samples(100_000) };
  await appendRun(indexed, [inboxKey(`cw${RUN_ID}`, SELF)], 200, 'warm', new Samples(1)); // JIT, prepared statements
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['plain', 'indexed'] as const) {
      const tag = `c${RUN_ID}r${round}${kind}`;
      const seq = tallies.sequential[kind];
      seq.ms += await appendRun(kinds[kind], [inboxKey(tag, SELF)], SEQUENTIAL_APPENDS, tag, latency[kind]);
      seq.appends += SEQUENTIAL_APPENDS;
      const many = Array.from({ length: INBOXES }, (_, i) => inboxKey(tag, `u${i}`));
      const con = tallies.concurrent[kind];
      con.ms += await appendRun(kinds[kind], many, APPENDS_PER_INBOX, tag, new Samples(1));
      con.appends += INBOXES * APPENDS_PER_INBOX;
    }
  }
  notes.push(
    `appends: ${ROUNDS} interleaved rounds; sequential = ${SEQUENTIAL_APPENDS} single-entry appends to one inbox; concurrent = ${INBOXES} inboxes × ${APPENDS_PER_INBOX}, each in sequence; each inbox first gets one unmeasured message from each of its ${PEERS} peers (in one append), then 1 in 5 messages is from the owner`,
  );
  notes.push(`  sequential latency, index on:  ${fmtLatency(latency.indexed.summary())}`);
  notes.push(`  sequential latency, index off: ${fmtLatency(latency.plain.summary())}`);
  const figure = (what: 'sequential' | 'concurrent'): Figure => {
    const t = tallies[what];
    const ratio = t.indexed.rate / t.plain.rate;
    return {
      name: `CQL appends/s with the index, ${what === 'sequential' ? '1 inbox in sequence' : `${INBOXES} inboxes at once`}`,
      value: fmtRate(t.indexed.rate),
      target: `≥ ${TARGET_RATIO}× without`,
      met: ratio >= TARGET_RATIO,
      raw: `${fmtRate(t.plain.rate)} index off`,
      ratio: `${ratio.toFixed(2)}× off`,
    };
  };
  return [figure('sequential'), figure('concurrent')];
}

/** `nodetool flush` of the bench keyspace, so the list reads meet SSTables as in production. */
async function flushKeyspace(): Promise<void> {
  const nodetool = fileURLToPath(new URL('../.services/cassandra/bin/nodetool', import.meta.url));
  await new Promise<void>((resolve) => execFile(nodetool, ['flush', KEYSPACE], { timeout: 120_000 }, () => resolve()));
}

async function timed(samples: Samples, op: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await op();
  samples.add(performance.now() - t0);
}

/** As the `conversations {limit: 50, lastMessages: 20}` op reads the store (libs/messaging conversation-ops.ts). */
async function bootstrap(stores: ScyllaStores, inbox: InboxKey): Promise<number> {
  await stores.conversations.headSeq(inbox);
  const page = await stores.conversations.listConversations({ inbox, limit: 50 });
  const lists = await mapLimited(page.convs, 16, (c) => stores.conversations.conversationEntries({ inbox, conv: c.conv, limit: 20 }));
  return lists.reduce((sum, l) => sum + l.entries.length, 0);
}

async function replay(stores: ScyllaStores, inbox: InboxKey): Promise<{ ms: number; entries: number }> {
  const t0 = performance.now();
  let after = 0;
  let entries = 0;
  for (;;) {
    const page = await stores.timeline.readAfter({ inbox, afterSeq: after, limit: 1000 });
    entries += page.length;
    if (page.length < 1000) return { ms: performance.now() - t0, entries };
    after = (page.at(-1) as Entry).seq;
  }
}

async function bigInboxReads(indexed: ScyllaStores, plain: ScyllaStores, notes: string[]): Promise<Figure[]> {
  const big: CqlBigInbox = await openCqlBigInbox(plain, indexed, KEYSPACE, BIG_ENTRIES);
  await flushKeyspace();
  notes.push(
    `big inbox: ${big.entries} entries, ${big.newest.length} conversations, ${big.origin}; ${await nodeSettled(plain.client, 120_000)}`,
  );
  const first = await indexed.conversations.listConversations({ inbox: big.inbox, limit: 50 });
  const expected = big.newest.slice(0, 50).map((r) => [r.conv.id, r.lastSeq, r.unread]);
  if (JSON.stringify(first.convs.map((c) => [c.conv.id, c.lastSeq, c.unread])) !== JSON.stringify(expected)) {
    throw new Error('the big inbox list differs from the model it was built from');
  }
  const rawList = `SELECT * FROM ${KEYSPACE}.conv_list WHERE inbox = ? LIMIT 51`;
  const list = new Samples(LIST_SAMPLES);
  const raw = new Samples(LIST_SAMPLES);
  for (let i = 0; i < LIST_SAMPLES; i++) {
    await timed(list, () => indexed.conversations.listConversations({ inbox: big.inbox, limit: 50 }));
    await timed(raw, () => plain.client.execute(rawList, [big.inbox], { prepare: true }));
  }
  const boot = new Samples(BOOTSTRAP_SAMPLES);
  let messages = 0;
  for (let i = 0; i < BOOTSTRAP_SAMPLES; i++) {
    await timed(boot, async () => {
      messages = await bootstrap(indexed, big.inbox);
    });
  }
  const replayed = await replay(plain, big.inbox);
  const [l, r, b] = [list.summary(), raw.summary(), boot.summary()];
  notes.push(`listConversations limit 50: ${fmtLatency(l)}`);
  notes.push(`  raw: the 51 conv_list rows by the driver alone: ${fmtLatency(r)}`);
  notes.push(`bootstrap (headSeq, list 50, last 20 of each, ${messages} messages): ${fmtLatency(b)}`);
  notes.push(`replay by readAfter pages of 1 000 from seq 0: ${replayed.entries} entries in ${fmtMs(replayed.ms)}`);
  const speedup = replayed.ms / b.p50;
  return [
    {
      name: `conversations list 50, p99 (${big.entries} entries, ${big.newest.length} convs)`,
      value: fmtMs(l.p99),
      target: `< ${TARGET_LIST_P99_MS} ms`,
      met: l.p99 < TARGET_LIST_P99_MS,
      raw: `${fmtMs(r.p99)} driver read`,
      ratio: `${(l.p99 / r.p99).toFixed(1)}× raw`,
    },
    {
      name: 'fresh-device bootstrap (list 50 + last 20 each), p50',
      value: fmtMs(b.p50),
      target: `≥ ${TARGET_BOOTSTRAP_SPEEDUP}× faster than replay`,
      met: speedup >= TARGET_BOOTSTRAP_SPEEDUP,
      raw: `${fmtMs(replayed.ms)} replay`,
      ratio: `${speedup.toFixed(0)}× faster`,
    },
  ];
}

export async function runConversationsDistributedBench(): Promise<BenchResult> {
  await waitForServices('before the conversations bench');
  const indexed = await open(true);
  const plain = await open(false);
  const notes: string[] = [];
  const figures: Figure[] = [];
  try {
    if (PARTS.has('append')) figures.push(...(await appendRates(indexed, plain, notes)));
    if (PARTS.has('list')) figures.push(...(await bigInboxReads(indexed, plain, notes)));
  } finally {
    await Promise.all([indexed.close(), plain.close()]);
  }
  return { figures, notes };
}
