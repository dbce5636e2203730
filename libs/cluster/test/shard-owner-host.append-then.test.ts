/**
 * ShardOwnerHost's follow-up appends (RemoteInboxWriter.appendThen) on the real Redis and NATS
 * (unique prefixes per run) with the embedded LMDB engine as timeline and ceiling store: the
 * second append runs in place or through its owner, only after a new first append.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import type { InboxKey } from '@seqline/core';
import { readAll, useRigPerTest } from './support/cluster.ts';
import { inboxInShard, msg, waitFor } from './support/doubles.ts';
import { probeServices, useSuiteServices } from './support/services.ts';

const services = await probeServices();
const TTL = 1000;
const SHARDS = 8;
const allShards = Array.from({ length: SHARDS }, (_, i) => i);

describe.skipIf(!services.ok)('ShardOwnerHost: follow-up appends (appendThen)', () => {
  const svc = useSuiteServices();
  const fresh = useRigPerTest(svc, { shardCount: SHARDS, ttl: TTL });
  const appinfos = async (inbox: InboxKey) => (await readAll(svc.store.engine.timeline, inbox)).map((e) => e.appinfo);

  it('runs the follow-up in place or through the other host, and only after a new first append', async () => {
    const rig = fresh();
    const a = rig.host('host-a');
    const b = rig.host('host-b');
    await Promise.all([a.start(), b.start()]);
    const [sa, sb] = await waitFor(
      'a split of all shards between both hosts',
      () => {
        const split = [a.servingShards(), b.servingShards()] as const;
        return split[0].length >= 2 && split[1].length >= 1 && split[0].length + split[1].length === SHARDS ? split : undefined;
      },
      20_000,
    );
    const tenant = `t${Date.now().toString(36)}`;
    const sender = inboxInShard(tenant, sa[0]!, SHARDS);
    const here = inboxInShard(tenant, sa[1]!, SHARDS);
    const there = inboxInShard(tenant, sb[0]!, SHARDS);
    const writer = rig.writer();

    const local = await writer.appendThen({
      inbox: sender,
      entries: [msg('m1')],
      next: { inbox: here, entries: [msg('m1-copy')], timeoutMs: 2000 },
    });
    expect(local).toMatchObject({ outcomes: [{ duplicate: false }], next: 'appended' });
    expect(await appinfos(here)).toEqual(['m1-copy']);
    expect(a.push.published.filter((p) => p.inbox === here)).toHaveLength(1);

    const remote = await writer.appendThen({
      inbox: sender,
      entries: [msg('m2')],
      next: { inbox: there, entries: [msg('m2-copy')], timeoutMs: 2000 },
    });
    expect(remote).toMatchObject({ outcomes: [{ duplicate: false }], next: 'appended' });
    expect(await appinfos(there)).toEqual(['m2-copy']);
    expect(b.push.published.filter((p) => p.inbox === there)).toHaveLength(1);

    // A resend: the first append finds the original; its follow-up is the caller's to decide.
    const resend = await writer.appendThen({
      inbox: sender,
      entries: [msg('m1')],
      next: { inbox: here, entries: [msg('m1-other')], timeoutMs: 2000 },
    });
    expect(resend).toEqual({ outcomes: [{ seq: local.outcomes[0]!.seq, duplicate: true }], next: 'skipped' });
    expect(await appinfos(here)).toEqual(['m1-copy']);
    expect(await appinfos(sender)).toEqual(['m1', 'm2']);
  });

  it('reports a follow-up no owner takes as failed, at its timeout, with the first append kept', async () => {
    const rig = fresh();
    const a = rig.host('host-a', { desiredShards: allShards.slice(0, -1) });
    await a.start();
    await waitFor('a serves all but the last shard', () => a.servingShards().length === SHARDS - 1);
    const tenant = `t${Date.now().toString(36)}`;
    const sender = inboxInShard(tenant, 0, SHARDS);
    const orphan = inboxInShard(tenant, SHARDS - 1, SHARDS);
    const t0 = performance.now();
    const chained = await rig
      .writer()
      .appendThen({ inbox: sender, entries: [msg('m3')], next: { inbox: orphan, entries: [msg('m3-copy')], timeoutMs: 300 } });
    expect(chained).toMatchObject({ outcomes: [{ duplicate: false }], next: 'failed' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(await appinfos(sender)).toEqual(['m3']);
  });

  it('refuses an owner reply that leaves `then` unanswered, and does not run the follow-up itself', async () => {
    const rig = fresh();
    const subjectPrefix = `${rig.subjectPrefix}.forged`;
    const seen: unknown[] = [];
    const forged = svc.nc.subscribe(`${subjectPrefix}.>`, {
      callback: (_err, m) => {
        const req = m.json<{ entries: unknown[] }>();
        seen.push(req);
        m.respond(JSON.stringify({ ok: true, outcomes: req.entries.map((_, i) => ({ seq: seen.length * 10 + i, duplicate: false })) }));
      },
    });
    try {
      const writer = rig.writer({ subjectPrefix });
      const chained = writer.appendThen({
        inbox: inboxKey('t', 'fg-a'),
        entries: [msg('m4')],
        next: {
          inbox: inboxKey('t', 'fg-b'),
          entries: [msg('m4-copy')],
          timeoutMs: 1000,
        },
      });
      await expect(chained).rejects.toMatchObject({ name: 'InternalError', code: 'INTERNAL' });
      await svc.nc.flush();
      // One request only: the follow-up was neither resent nor written by the caller.
      expect(seen).toMatchObject([{ op: 'append', inbox: 't:fg-a', then: { inbox: 't:fg-b' } }]);
    } finally {
      forged.unsubscribe();
    }
  });
});
