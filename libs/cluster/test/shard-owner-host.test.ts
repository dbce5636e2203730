/**
 * ShardOwnerHost + RemoteInboxWriter on the real Redis and NATS (unique prefixes per run) with
 * the embedded LMDB engine as timeline and ceiling store. Follow-up appends (appendThen):
 * shard-owner-host.append-then.test.ts.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, shardOf } from '@seqline/core';
import type { AppendOutcome } from '@seqline/core';
import { clusterRig, readAll, useRigPerTest } from './support/cluster.ts';
import type { ClusterRig } from './support/cluster.ts';
import { firstNonIncreasing, inboxInShard, msg, sleep, waitFor } from './support/doubles.ts';
import { probeServices, useSuiteServices } from './support/services.ts';

const services = await probeServices();
const TTL = 1000;
const SHARDS = 8;
const allShards = Array.from({ length: SHARDS }, (_, i) => i);

describe.skipIf(!services.ok)('ShardOwnerHost', () => {
  const svc = useSuiteServices();
  const fresh = useRigPerTest(svc, { shardCount: SHARDS, ttl: TTL });
  const timeline = () => svc.store.engine.timeline;

  it('splits the shards between two hosts and serves appends, receipts and heads from the owner', async () => {
    const rig = fresh();
    const a = rig.host('host-a');
    const b = rig.host('host-b');
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

    const writer = rig.writer();
    const tenant = `t${Date.now().toString(36)}`;
    for (const shard of allShards) {
      const inbox = inboxInShard(tenant, shard, SHARDS);
      const owner = a.servingShards().includes(shard) ? a : b;
      const first = await writer.append({ inbox, entries: [msg(`${inbox}-1`), msg(`${inbox}-2`)] });
      expect(first.map((o) => o.duplicate)).toEqual([false, false]);
      expect(first[1]!.seq).toBeGreaterThan(first[0]!.seq);
      // A resend is answered with the original seqs (I3).
      expect(await writer.append({ inbox, entries: [msg(`${inbox}-2`), msg(`${inbox}-1`)] })).toEqual([
        { seq: first[1]!.seq, duplicate: true },
        { seq: first[0]!.seq, duplicate: true },
      ]);
      expect((await readAll(timeline(), inbox)).map((e) => e.seq)).toEqual(first.map((o) => o.seq));
      expect(await writer.headSeq(inbox)).toBe(first[1]!.seq);
      expect(owner.push.published.filter((p) => p.inbox === inbox)).toHaveLength(1);
      await writer.addReceipt({ inbox, appinfo: `${inbox}-1`, readers: ['carol'] });
      const receipt = (await readAll(timeline(), inbox)).at(-1);
      expect(receipt).toMatchObject({ kind: 'receipt', referSeq: first[0]!.seq, readBy: ['carol'] });
    }
  });

  it('hands shards over when a host closes: its release is recorded, the successor serves at once and continues strictly higher', async () => {
    const rig = fresh();
    const a = rig.host('host-a');
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const writer = rig.writer();
    const inbox = inboxKey(`t${Date.now().toString(36)}`, 'alice');
    const before: AppendOutcome[] = [];
    for (let i = 0; i < 5; i++) before.push(...(await writer.append({ inbox, entries: [msg()] })));
    const epochsA = new Map(a.shardStates().map((s) => [s.shard, s.epoch]));

    const b = rig.host('host-b');
    await b.start();
    expect(b.readiness()).toMatchObject({ ready: false, serving: [] });
    const closing = performance.now();
    await a.close();
    const shard = shardOf(inbox, SHARDS);
    await waitFor('b serves all', () => b.servingShards().length === SHARDS);
    // No wait-out: a recorded each release, and told b at once (no wait for b's next round).
    expect(performance.now() - closing).toBeLessThan(TTL);
    expect(b.readiness()).toEqual({ ready: true, serving: allShards, pending: [] });
    for (const s of allShards) {
      const acquired = rig.logger.find('shard lease acquired', { shard: s, host: 'host-b' }).at(-1);
      expect(acquired?.obj).toMatchObject({ handover: 'released', waitMs: 0, epoch: epochsA.get(s)! + 1 });
      expect(rig.logger.find('shard lease released', { shard: s, host: 'host-a' })[0]?.obj).toMatchObject({ recorded: true });
    }
    expect(b.shardStates().find((s) => s.shard === shard)!.epoch).toBeGreaterThan(epochsA.get(shard)!);
    const after = await writer.append({ inbox, entries: [msg()] });
    const seqs = [...before, ...after].map((o) => o.seq);
    expect(firstNonIncreasing(seqs)).toBeUndefined();
    // The successor started from the persisted ceiling: a jump forward, never a step back.
    expect(after[0]!.seq).toBeGreaterThan(before.at(-1)!.seq);
    expect((await readAll(timeline(), inbox)).map((e) => e.seq)).toEqual(seqs);
  });

  it('keeps every append of a send loop across a handover: none lost, none duplicated, none going back, none left unanswered', async () => {
    const rig = fresh();
    const a = rig.host('host-a');
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const b = rig.host('host-b');
    await b.start();
    const writer = rig.writer(); // requests time out after 1 s
    const tenant = `t${Date.now().toString(36)}`;
    const inboxes = Array.from({ length: 16 }, (_, i) => inboxKey(tenant, `loop${i}`));
    let stop = false;
    let slowest = 0;
    const loops = inboxes.map(async (inbox) => {
      const outcomes: AppendOutcome[] = [];
      const appinfos: string[] = [];
      for (let i = 0; !stop; i++) {
        const appinfo = `${inbox}-${i}`;
        appinfos.push(appinfo);
        const t0 = performance.now();
        outcomes.push(...(await writer.append({ inbox, entries: [msg(appinfo)] })));
        slowest = Math.max(slowest, performance.now() - t0);
      }
      return { inbox, outcomes, appinfos };
    });
    await sleep(300);
    await a.close(); // hands every shard over mid-loop
    await waitFor('b serves all', () => b.servingShards().length === SHARDS, 20_000);
    await sleep(300);
    stop = true;
    const done = await Promise.all(loops);
    // A request on its way to a's subscription as it closed was answered (its subscription is
    // drained, not dropped): none waited for its 1 s timeout, and the handover itself skips the wait-out.
    expect(slowest).toBeLessThan(1000);
    for (const { inbox, outcomes, appinfos } of done) {
      expect(outcomes.every((o) => !o.duplicate)).toBe(true);
      expect(firstNonIncreasing(outcomes.map((o) => o.seq))).toBeUndefined();
      const stored = await readAll(timeline(), inbox);
      expect(stored.map((e) => e.appinfo)).toEqual(appinfos);
      expect(stored.map((e) => e.seq)).toEqual(outcomes.map((o) => o.seq));
    }
  });

  it('an owner that wakes from a pause past its lease refuses to write; the shard resumes after a new wait-out', async () => {
    const rig = fresh();
    let jump = 0;
    const a = rig.host('host-a', { now: () => performance.now() + jump });
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const writer = rig.writer();
    const inbox = inboxKey(`t${Date.now().toString(36)}`, 'paused');
    const shard = shardOf(inbox, SHARDS);
    const first = await writer.append({ inbox, entries: [msg()] });
    const epochBefore = a.shardStates().find((s) => s.shard === shard)!.epoch;

    // What a pause of three ttls looks like to the process: its keys expired, its clock moved on.
    await Promise.all(allShards.map((s) => svc.redis.pexpire(a.leases.keyOf(s), 1)));
    jump = TTL * 3;
    const woke = performance.now();
    const raw = await svc.nc.request(`${rig.subjectPrefix}.${shard}`, JSON.stringify({ op: 'append', inbox, entries: [msg()] }), {
      timeout: 2000,
    });
    expect(raw.json()).toMatchObject({ ok: false, error: { code: 'OVERLOADED', retryable: true } });

    const second = await writer.append({ inbox, entries: [msg()] });
    expect(performance.now() - woke).toBeGreaterThanOrEqual(TTL); // a new lease, waited out
    expect(rig.logger.find('dropping shard', { shard }).length).toBeGreaterThan(0);
    expect(a.shardStates().find((s) => s.shard === shard)!.epoch).toBeGreaterThan(epochBefore);
    expect(second[0]!.seq).toBeGreaterThan(first[0]!.seq);
    expect((await readAll(timeline(), inbox)).map((e) => e.seq)).toEqual([first[0]!.seq, second[0]!.seq]);
  });
});

describe.skipIf(!services.ok)('RemoteInboxWriter', () => {
  const svc = useSuiteServices();
  let rig: ClusterRig;

  beforeAll(async () => {
    rig = clusterRig({ ...svc, shardCount: 2, ttl: 600 });
    const host = rig.host('host-a');
    await host.start();
    await waitFor('host serves both shards', () => host.servingShards().length === 2);
  });
  afterAll(async () => {
    await rig.cleanup();
  });

  it('gives up with OverloadedError at its deadline when no owner answers', async () => {
    const writer = rig.writer({ subjectPrefix: 'test.nobody.home', deadlineMs: 600 });
    const t0 = performance.now();
    await expect(writer.append({ inbox: inboxKey('t', 'x'), entries: [msg()] })).rejects.toMatchObject({
      name: 'OverloadedError',
      code: 'OVERLOADED',
    });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(600);
  });

  it('rethrows a final error from the owner as its SeqlineError class, without retrying', async () => {
    const writer = rig.writer({ deadlineMs: 10_000 });
    const spy = svc.nc.subscribe(`${rig.subjectPrefix}.>`);
    let seen = 0;
    void (async () => {
      for await (const _ of spy) seen++;
    })();
    const bad = { ...msg(), kind: 'nonsense' } as unknown as ReturnType<typeof msg>;
    const t0 = performance.now();
    await expect(writer.append({ inbox: inboxKey('t', 'y'), entries: [bad] })).rejects.toMatchObject({
      name: 'BadRequestError',
      code: 'BAD_REQUEST',
    });
    expect(performance.now() - t0).toBeLessThan(1000);
    await svc.nc.flush();
    spy.unsubscribe();
    expect(seen).toBe(1);
  });

  it('splits a call larger than the NATS payload limit into ordered requests', async () => {
    const writer = rig.writer();
    const spy = svc.nc.subscribe(`${rig.subjectPrefix}.>`);
    let seen = 0;
    void (async () => {
      for await (const _ of spy) seen++;
    })();
    const inbox = inboxKey(`t${Date.now().toString(36)}`, 'big');
    const big = 'x'.repeat(60 * 1024);
    const entries = Array.from({ length: 40 }, (_, i) => msg(`big-${i}`, big)); // ~2.4 MB
    const outcomes = await writer.append({ inbox, entries });
    await svc.nc.flush();
    spy.unsubscribe();
    expect(seen).toBeGreaterThanOrEqual(3);
    expect(outcomes).toHaveLength(40);
    expect(firstNonIncreasing(outcomes.map((o) => o.seq))).toBeUndefined();
    const stored = await readAll(svc.store.engine.timeline, inbox);
    expect(stored.map((e) => e.appinfo)).toEqual(entries.map((e) => e.appinfo));
  });

  it('refuses an entry that cannot fit in one NATS message', async () => {
    const writer = rig.writer();
    const huge = msg('huge', 'x'.repeat(2 * 1024 * 1024));
    await expect(writer.append({ inbox: inboxKey('t', 'z'), entries: [huge] })).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });

  it('answers a raw malformed request with a final BAD_REQUEST', async () => {
    const reply = await svc.nc.request(`${rig.subjectPrefix}.0`, 'not json', { timeout: 2000 });
    expect(reply.json()).toEqual({ ok: false, error: { code: 'BAD_REQUEST', message: 'request is not JSON', retryable: false } });
  });
});
