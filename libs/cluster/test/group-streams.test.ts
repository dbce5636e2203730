/**
 * Group streams in distributed mode: the owner of shard `shardOf(group)` is the single writer of
 * the group's stream, reached through RemoteGroupStreamWriter. Real Redis and NATS (unique
 * prefixes per run), the embedded LMDB engine as group stream, timeline and ceiling store.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { FencedError, groupKey, shardOf } from '@seqline/core';
import type { GroupAppendOutcome, GroupKey } from '@seqline/core';
import { readAllOfGroup, useRigPerTest } from './support/cluster.ts';
import { firstNonIncreasing, groupInShard, groupMsg, inboxInShard, msg, sleep, waitFor } from './support/doubles.ts';
import { RecordingGroupStreams } from './support/group-streams.ts';
import { probeServices, useSuiteServices } from './support/services.ts';

const services = await probeServices();
const TTL = 1000;
const SHARDS = 8;
const allShards = Array.from({ length: SHARDS }, (_, i) => i);
let runs = 0;
const newTenant = (): string => `t${Date.now().toString(36)}${++runs}`;

describe.skipIf(!services.ok)('group streams owned by shard owners', () => {
  const svc = useSuiteServices();
  const fresh = useRigPerTest(svc, { shardCount: SHARDS, ttl: TTL });
  const streams = () => svc.store.engine.groupStreams;

  it('routes appends and heads to the owner of shardOf(group), which claims group-shard-<n> with its lease epoch', async () => {
    const rig = fresh();
    const rec = { 'host-a': new RecordingGroupStreams(streams()), 'host-b': new RecordingGroupStreams(streams()) };
    const a = rig.host('host-a', { groupStreams: rec['host-a'] });
    const b = rig.host('host-b', { groupStreams: rec['host-b'] });
    await Promise.all([a.start(), b.start()]);
    await waitFor(
      'both hosts serving a disjoint split of all shards',
      () => {
        const sa = a.servingShards();
        const sb = b.servingShards();
        return sa.length > 0 && sb.length > 0 && [...sa, ...sb].sort((x, y) => x - y).join() === allShards.join();
      },
      20_000,
    );

    const writer = rig.groupWriter();
    const tenant = newTenant();
    for (const shard of allShards) {
      const group = groupInShard(tenant, shard, SHARDS);
      const [owner, other] = a.servingShards().includes(shard) ? [a, b] : [b, a];
      expect(await writer.headSeq(group)).toBe(0);
      const first = await writer.append({ group, entries: [groupMsg(group, `${group}-1`), groupMsg(group, `${group}-2`)] });
      expect(first[1]!.seq).toBeGreaterThan(first[0]!.seq);
      expect(first).toEqual([
        { seq: first[0]!.seq, duplicate: false, prevSeq: 0 },
        { seq: first[1]!.seq, duplicate: false, prevSeq: first[0]!.seq },
      ]);
      const [third] = await writer.append({ group, entries: [groupMsg(group, `${group}-3`)] });
      expect(third).toEqual({ seq: expect.any(Number), duplicate: false, prevSeq: first[1]!.seq });
      // A resend (and a repeat inside one call) gets the original gseqs back, without prevSeq.
      expect(
        await writer.append({
          group,
          entries: [groupMsg(group, `${group}-2`), groupMsg(group, `${group}-1`), groupMsg(group, `${group}-2`)],
        }),
      ).toEqual([
        { seq: first[1]!.seq, duplicate: true },
        { seq: first[0]!.seq, duplicate: true },
        { seq: first[1]!.seq, duplicate: true },
      ]);
      expect(await writer.headSeq(group)).toBe(third!.seq);
      const stored = await readAllOfGroup(streams(), group);
      expect(stored.map((e) => [e.appinfo, e.seq])).toEqual([
        [`${group}-1`, first[0]!.seq],
        [`${group}-2`, first[1]!.seq],
        [`${group}-3`, third!.seq],
      ]);
      expect(rec[owner.ownerId as keyof typeof rec].wroteTo(group)).toBe(true);
      expect(rec[other.ownerId as keyof typeof rec].wroteTo(group)).toBe(false);
      // Both sections of the shard were claimed once, with the lease's epoch.
      const epoch = owner.shardStates().find((s) => s.shard === shard)!.epoch;
      for (const section of [`inbox-shard-${shard}`, `group-shard-${shard}`]) {
        expect(rig.logger.find('seq section claimed', { section, epoch, host: owner.ownerId })).toHaveLength(1);
      }
    }

    // A head requested right after an append is ordered after it at the owner.
    const group = groupInShard(tenant, 3, SHARDS);
    const [outcomes, head] = await Promise.all([
      writer.append({ group, entries: [groupMsg(group), groupMsg(group)] }),
      writer.headSeq(group),
    ]);
    expect(head).toBe(outcomes.at(-1)!.seq);
  });

  it('hands group streams over cleanly: the successor claims, then serves without a wait-out; nothing lost or doubled, gseqs only rise', async () => {
    const rig = fresh();
    const a = rig.host('host-a');
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const b = rig.host('host-b');
    await b.start();
    const writer = rig.groupWriter();
    const tenant = newTenant();
    const groups = [0, 1, 2, 3].map((i) => groupKey(tenant, `loop${i}`));
    let stop = false;
    const loops = groups.map(async (group) => {
      const outcomes: GroupAppendOutcome[] = [];
      const appinfos: string[] = [];
      for (let i = 0; !stop; i++) {
        appinfos.push(`${group}-${i}`);
        outcomes.push(...(await writer.append({ group, entries: [groupMsg(group, `${group}-${i}`)] })));
      }
      return { group, outcomes, appinfos };
    });
    // A request that lands at the old owner but whose reply is lost: the caller resends later.
    const lost = groupKey(tenant, 'lost-reply');
    const landed = await svc.nc.request(
      `${rig.subjectPrefix}.${shardOf(lost, SHARDS)}`,
      JSON.stringify({ op: 'gappend', group: lost, entries: [groupMsg(lost, 'lost-1')] }),
      { timeout: 2000 },
    );
    const lostSeq = landed.json<{ outcomes: GroupAppendOutcome[] }>().outcomes[0]!.seq;
    await sleep(300);
    const epochsA = new Map(a.shardStates().map((s) => [s.shard, s.epoch]));
    await a.close(); // hands every shard over mid-loop
    await waitFor('b serves all', () => b.servingShards().length === SHARDS, 20_000);
    await sleep(300);
    stop = true;

    for (const { group, outcomes, appinfos } of await Promise.all(loops)) {
      const stored = await readAllOfGroup(streams(), group);
      expect(stored.map((e) => e.appinfo)).toEqual(appinfos);
      expect(stored.map((e) => e.seq)).toEqual(outcomes.map((o) => o.seq));
      expect(firstNonIncreasing(outcomes.map((o) => o.seq))).toBeUndefined();
      // Each stored message names the gseq before it (a retried one that had landed is a duplicate).
      outcomes.forEach((o, i) => {
        if (!o.duplicate) expect(o.prevSeq).toBe(i === 0 ? 0 : outcomes[i - 1]!.seq);
      });
    }
    expect(await writer.append({ group: lost, entries: [groupMsg(lost, 'lost-1')] })).toEqual([{ seq: lostSeq, duplicate: true }]);
    expect((await readAllOfGroup(streams(), lost)).map((e) => e.seq)).toEqual([lostSeq]);

    for (const shard of allShards) {
      const epochB = b.shardStates().find((s) => s.shard === shard)!.epoch;
      expect(epochB).toBeGreaterThan(epochsA.get(shard)!);
      // a recorded its release, so b skipped the wait-out; b claimed the gseq section with its
      // epoch before it served, fencing a's raises.
      expect(rig.logger.find('shard lease acquired', { shard, epoch: epochB, host: 'host-b' })[0]?.obj).toMatchObject({
        handover: 'released',
      });
      const claimed = rig.logger.find('seq section claimed', { section: `group-shard-${shard}`, epoch: epochB, host: 'host-b' });
      const serving = rig.logger.find('serving shard', { shard, epoch: epochB, host: 'host-b' });
      expect(serving[0]!.at).toBeGreaterThanOrEqual(claimed[0]!.at);
      expect(serving[0]!.at - claimed[0]!.at).toBeLessThan(TTL);
      await expect(svc.store.engine.ceilings.claim({ section: `group-shard-${shard}`, epoch: epochsA.get(shard)! })).rejects.toBeInstanceOf(
        FencedError,
      );
    }
  });

  it('dedups by appinfo when the caller retries a request that landed after it timed out', async () => {
    const rig = fresh();
    const rec = new RecordingGroupStreams(streams());
    const a = rig.host('host-a', { groupStreams: rec });
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const writer = rig.groupWriter({ requestTimeoutMs: 300 });
    const group = groupKey(newTenant(), 'slow');
    const [before] = await writer.append({ group, entries: [groupMsg(group, 'slow-0')] });

    rec.stallNextAppendMs = 900; // the owner's store write outlasts the caller's request timeout
    const t0 = performance.now();
    const [retried] = await writer.append({ group, entries: [groupMsg(group, 'slow-1')] });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
    expect(retried).toEqual({ seq: expect.any(Number), duplicate: true });
    expect(retried!.seq).toBeGreaterThan(before!.seq);
    const stored = await readAllOfGroup(streams(), group);
    expect(stored.map((e) => [e.appinfo, e.seq])).toEqual([
      ['slow-0', before!.seq],
      ['slow-1', retried!.seq],
    ]);
    expect(rec.appended.filter((w) => w.group === group)).toHaveLength(2);
  });

  it('an owner that wakes from a pause past its lease refuses group appends; the stream resumes strictly higher', async () => {
    const rig = fresh();
    let jump = 0;
    const a = rig.host('host-a', { now: () => performance.now() + jump });
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const writer = rig.groupWriter();
    const group = groupKey(newTenant(), 'paused');
    const shard = shardOf(group, SHARDS);
    const [first] = await writer.append({ group, entries: [groupMsg(group)] });

    await Promise.all(allShards.map((s) => svc.redis.pexpire(a.leases.keyOf(s), 1)));
    jump = TTL * 3;
    const woke = performance.now();
    const raw = await svc.nc.request(
      `${rig.subjectPrefix}.${shard}`,
      JSON.stringify({ op: 'gappend', group, entries: [groupMsg(group)] }),
      { timeout: 2000 },
    );
    expect(raw.json()).toMatchObject({ ok: false, error: { code: 'OVERLOADED', retryable: true } });

    const [second] = await writer.append({ group, entries: [groupMsg(group)] });
    expect(performance.now() - woke).toBeGreaterThanOrEqual(TTL);
    expect(second).toEqual({ seq: expect.any(Number), duplicate: false, prevSeq: first!.seq });
    expect(second!.seq).toBeGreaterThan(first!.seq);
    expect((await readAllOfGroup(streams(), group)).map((e) => e.seq)).toEqual([first!.seq, second!.seq]);
  });

  it('splits a large append into ordered requests whose prevSeqs chain across the split', async () => {
    const rig = fresh();
    const a = rig.host('host-a');
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const writer = rig.groupWriter();
    const group = groupKey(newTenant(), 'big');
    const [head] = await writer.append({ group, entries: [groupMsg(group)] });
    const big = 'x'.repeat(60 * 1024);
    const entries = Array.from({ length: 40 }, (_, i) => groupMsg(group, `big-${i}`, big)); // ~2.4 MB: 3+ requests
    const outcomes = await writer.append({ group, entries });
    expect(outcomes).toHaveLength(40);
    outcomes.forEach((o, i) => expect(o.prevSeq).toBe(i === 0 ? head!.seq : outcomes[i - 1]!.seq));
    const stored = await readAllOfGroup(streams(), group);
    expect(stored.slice(1).map((e) => e.appinfo)).toEqual(entries.map((e) => e.appinfo));
    expect(stored.map((e) => e.seq)).toEqual([head!.seq, ...outcomes.map((o) => o.seq)]);
  });

  it('answers group ops with a final error when the host has no group stream store; inboxes still work', async () => {
    const rig = fresh();
    const a = rig.host('host-a', { groupStreams: undefined });
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const group: GroupKey = groupKey(newTenant(), 'nowhere');
    const t0 = performance.now();
    await expect(rig.groupWriter().append({ group, entries: [groupMsg(group)] })).rejects.toMatchObject({
      name: 'InternalError',
      code: 'INTERNAL',
    });
    await expect(rig.groupWriter().headSeq(group)).rejects.toMatchObject({ name: 'InternalError' });
    expect(performance.now() - t0).toBeLessThan(1000); // not retried until the deadline
    const inbox = inboxInShard(newTenant(), shardOf(group, SHARDS), SHARDS);
    expect(await rig.writer().append({ inbox, entries: [msg()] })).toEqual([{ seq: expect.any(Number), duplicate: false }]);
  });
});
