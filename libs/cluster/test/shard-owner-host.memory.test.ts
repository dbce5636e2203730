/**
 * A host runs one InboxOwner per leased shard; what those owners keep in memory must be bounded
 * per process, not per shard (a 64-shard worker once held 64 × the documented bound of resend
 * appinfos, and grew by ~50 MiB a minute at 1 000 msg/s until it got there).
 */
import { describe, expect, it } from 'vitest';
import { useRigPerTest } from './support/cluster.ts';
import { inboxInShard, msg, waitFor } from './support/doubles.ts';
import { probeServices, useSuiteServices } from './support/services.ts';

const services = await probeServices();
const SHARDS = 8;

describe.skipIf(!services.ok)('ShardOwnerHost memory bounds', () => {
  const svc = useSuiteServices();
  const fresh = useRigPerTest(svc, { shardCount: SHARDS, ttl: 1000 });

  it('its shard owners share one bound on remembered appinfos, and still answer resends', async () => {
    const rig = fresh();
    const host = rig.host('host-a', { ownerOptions: { maxRecentAppinfos: 8 } });
    await host.start();
    await waitFor('the host serves all shards', () => host.servingShards().length === SHARDS);
    const writer = rig.writer();
    const tenant = `t${Date.now().toString(36)}`;
    const firsts = [];
    // 5 appinfos in each of the 8 shards: 40 remembered, against a bound of 8 for the process
    // (each owner with a bound of its own would hold 5, 40 in all).
    for (let shard = 0; shard < SHARDS; shard++) {
      const inbox = inboxInShard(tenant, shard, SHARDS);
      for (let i = 0; i < 5; i++) {
        const [outcome] = await writer.append({ inbox, entries: [msg(`${inbox}-${i}`)] });
        if (i === 0) firsts.push({ inbox, seq: outcome!.seq });
      }
      expect(host.rememberedAppinfos).toBeGreaterThan(0);
      expect(host.rememberedAppinfos).toBeLessThanOrEqual(8);
    }
    // Forgotten by memory, a resend is still found by the store's dedup, which answers with the original.
    for (const { inbox, seq } of firsts) {
      expect(await writer.append({ inbox, entries: [msg(`${inbox}-0`)] })).toEqual([
        { seq, duplicate: true, original: { ...msg(`${inbox}-0`), seq } },
      ]);
    }
  });

  it('its shard writers share one bound on remembered seqs and one on inbox states, give them back when they stop, and never reuse a seq', async () => {
    const rig = fresh();
    const host = rig.host('host-a', { ownerOptions: { maxSeqKeys: 6, maxCachedInboxes: 5 } });
    await host.start();
    await waitFor('the host serves all shards', () => host.servingShards().length === SHARDS);
    const writer = rig.writer();
    const tenant = `t${Date.now().toString(36)}`;
    const heads = new Map<string, number>();
    // 3 inboxes in each of the 8 shards, written twice: 24 keys against a bound of 6 for the process.
    for (let round = 0; round < 2; round++) {
      for (let shard = 0; shard < SHARDS; shard++) {
        for (let i = 0; i < 3; i++) {
          const inbox = inboxInShard(tenant, shard, SHARDS, i);
          const [outcome] = await writer.append({ inbox, entries: [msg(`${inbox}-${round}`)] });
          // A forgotten inbox restarts above its section's floor: forward, never back.
          expect(outcome!.seq).toBeGreaterThan(heads.get(inbox) ?? 0);
          heads.set(inbox, outcome!.seq);
          expect(host.rememberedSeqKeys).toBeLessThanOrEqual(6);
          expect(host.cachedInboxes).toBeLessThanOrEqual(5);
        }
      }
    }
    expect(host.rememberedSeqKeys).toBeGreaterThan(0);
    expect(host.cachedInboxes).toBeGreaterThan(0);
    await host.close();
    expect(host.rememberedSeqKeys).toBe(0);
    expect(host.cachedInboxes).toBe(0);
  });
});
