/**
 * Issue 3's figures, distributed mode, one run on the loopback Cassandra node:
 * 1. appends/s of the CQL TimelineStore driven through an InboxOwner (as a worker does) against
 *    the raw cassandra-driver prepared single-row INSERT rate, same concurrency and duration
 *    (that part and the long-history one: distributed-store-rates.ts);
 * 2. 1:1 send → push latency at a fixed open-loop rate through a worker + gateway (children);
 * 3. sync of 200 entries through that gateway, Redis cache hit and miss.
 */
import { openScyllaStores } from '@seqline/store/scylla';
import { writeShapes } from './cql-write-shapes.ts';
import { firstSend, fmtCpu, PUSH_LOAD_SHAPE, pushLoad, sustained, type LoadResult } from './distributed-push.ts';
import { disturbances, startDistributedStack, waitForServices, type DistributedStack } from './distributed-stack.ts';
import { historyRate, SLICE_MS, STORE_KEYSPACE, storeRates } from './distributed-store-rates.ts';
import { messageBody, RUN_ID } from './fixtures.ts';
import { nodeSettled } from './node-background.ts';
import { fmtLatency, fmtMs, Samples, type BenchResult, type Figure, type LatencySummary } from './stats.ts';
import { schedPolicyOf, servicePid, sleep } from './support.ts';
import { closedLoop } from './closed-loop.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

/**
 * `BENCH_PARTS=store,push,sync,history` (the default) runs a part alone, e.g. while tuning one path;
 * `shapes` (opt-in) adds the driver-only write shapes of bench/cql-write-shapes.ts.
 */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'store,push,sync,history').split(',').map((part) => part.trim()));
/** `BENCH_RATES=2000,1000,500`: the open-loop rates tried, in order, until one is sustained. */
const RATES = (process.env.BENCH_RATES ?? '2000,1000,500').split(',').map(Number);
const SYNC_SAMPLES = 300;

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
