/**
 * The distributed stack as separate processes — two gateways, two workers, on Cassandra, Redis
 * and NATS: a push reaches only the gateway holding the recipient, sync works through either
 * gateway, and the 1:1 and group flows (send, sync, read → receipt, recall) work end to end.
 */
import { connect as connectNats } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import { SECRET, TestClient, waitFor, type WireEntry } from '../../server/test/harness.ts';
import { httpSyncAll, metricValue } from './support/clients.ts';
import { Cluster, SHARDS, uniqueId } from './support/cluster.ts';
import { NATS_URL, natsSubscriptions, probeAll, requireServices } from './support/services.ts';

const PUSHES = 'seqline_gateway_pushes_total';
const msgs = (entries: WireEntry[]) => entries.filter((e) => e.kind === 'msg');

if (requireServices(await probeAll(), 'distributed stack (2 gateways, 2 workers)')) {
  describe('distributed stack: 2 gateways + 2 workers as processes', () => {
    let cluster: Cluster;
    const clients: TestClient[] = [];
    const connect = async (gateway: number, user: string) => {
      const c = await TestClient.connect(cluster.gateways[gateway]!.url, user, cluster.tenant);
      clients.push(c);
      return c;
    };

    beforeAll(async () => {
      cluster = await Cluster.start({ workers: 2, gateways: 2 });
      // Readiness end to end: gateway → NATS → shard owner → Cassandra.
      const probe = await connect(0, 'warmup');
      await waitFor(
        async () => (await probe.call('send', { appinfo: 'warmup', to: { user: 'warmup2' }, type: 'text', body: {} })).ok,
        30_000,
        'a first send',
      );
    }, 240_000);

    afterEach(({ task }) => {
      if (task.result?.state === 'fail' && cluster) console.log(`process logs:\n${cluster.report()}`);
    });

    afterAll(async () => {
      for (const c of clients) c.close();
      await cluster?.close();
    }, 60_000);

    it('each worker answers /healthz and /metrics; the shards they serve add up to all of them', async () => {
      const served = await Promise.all(
        cluster.workers.map(async (w) => {
          const health = await fetch(w.httpUrl + '/healthz');
          expect(health.status).toBe(200);
          const { shards } = (await health.json()) as { shards: number };
          const metrics = await (await fetch(w.httpUrl + '/metrics')).text();
          expect(metrics).toContain(`seqline_worker_shards_served ${shards}`);
          expect(metrics).toMatch(/^process_cpu_user_seconds_total \d/m);
          return shards;
        }),
      );
      expect(served.every((n) => n > 0)).toBe(true);
      expect(served.reduce((a, b) => a + b, 0)).toBe(SHARDS);
    });

    it('every worker and gateway answers /readyz 200 once every shard is served (liveness is /healthz)', async () => {
      for (const w of cluster.workers) {
        const ready = await fetch(w.httpUrl + '/readyz');
        expect(ready.status).toBe(200);
        expect(((await ready.json()) as { shards: number }).shards).toBe(w.serving.size);
      }
      for (const g of cluster.gateways) {
        const ready = await fetch(g.httpUrl + '/readyz');
        expect(ready.status).toBe(200);
        expect(await ready.json()).toEqual({ ok: true, shards: SHARDS, unserved: 0 });
      }
    });

    it('a send on gateway 1 is pushed to the recipient through gateway 2 only', async () => {
      const [g1, g2] = cluster.gateways as [(typeof cluster.gateways)[0], (typeof cluster.gateways)[0]];
      const alice = await connect(0, uniqueId('alice'));
      const bob = await connect(1, uniqueId('bob'));
      const bobSubject = `${cluster.namespace}.push.u.${Buffer.from(inboxKey(cluster.tenant, bob.user)).toString('base64url')}`;
      // Only gateway 2 holds bob, so only it asked NATS for his pushes.
      await waitFor(async () => (await natsSubscriptions(`seqline-${g2.name}`)).includes(bobSubject), 5000, 'gateway 2 subscribed to bob');
      expect(await natsSubscriptions(`seqline-${g1.name}`)).not.toContain(bobSubject);

      const before = { g1: await metricValue(g1.httpUrl, PUSHES), g2: await metricValue(g2.httpUrl, PUSHES) };
      const alicePushesBefore = alice.pushes.length;
      const sent = await alice.ok<{ seq: number }>('send', {
        appinfo: uniqueId('a'),
        to: { user: bob.user },
        type: 'text',
        body: { text: 'hi' },
      });
      const push = await waitFor(() => bob.pushes.find((p) => p.entries.some((e) => e.from === alice.user)), 10_000, 'push to bob');
      expect(push.entries[0]).toMatchObject({ kind: 'msg', conv: { type: 'user', id: alice.user } });
      // Alice's own copy is pushed to her socket on gateway 1; nothing else went through gateway 1.
      await waitFor(() => alice.pushes.some((p) => p.entries.some((e) => e.seq === sent.seq)), 10_000, "push of alice's own copy");
      await new Promise((r) => setTimeout(r, 300));
      const after = { g1: await metricValue(g1.httpUrl, PUSHES), g2: await metricValue(g2.httpUrl, PUSHES) };
      expect(after.g2 - before.g2).toBe(1);
      expect(after.g1 - before.g1).toBe(alice.pushes.length - alicePushesBefore);

      // A sender with no socket at all (HTTP send on gateway 1): gateway 1 pushes nothing.
      const dave = uniqueId('dave');
      const before2 = { g1: after.g1, g2: await metricValue(g2.httpUrl, PUSHES) };
      const bobPushes = bob.pushes.length;
      const res = await httpSend(g1.httpUrl, cluster.tenant, dave, bob.user);
      expect(res.ok).toBe(true);
      await waitFor(() => bob.pushes.length > bobPushes, 10_000, "push of dave's message to bob");
      await new Promise((r) => setTimeout(r, 300));
      expect(await metricValue(g1.httpUrl, PUSHES)).toBe(before2.g1);
      expect(await metricValue(g2.httpUrl, PUSHES)).toBe(before2.g2 + 1);

      // Sync gives the same inbox through either gateway (socket and HTTP).
      const viaG2 = await bob.syncAll();
      const bobOnG1 = await connect(0, bob.user);
      expect(await bobOnG1.syncAll()).toEqual(viaG2);
      expect(await httpSyncAll(g1.httpUrl, cluster.tenant, bob.user)).toEqual(viaG2);
      expect(msgs(viaG2).map((e) => e.from)).toEqual([alice.user, dave]);
    });

    it('1:1 through the distributed stack: send, sync, read → receipt, recall', async () => {
      const alice = await connect(0, uniqueId('alice'));
      const bob = await connect(1, uniqueId('bob'));
      const appinfo = uniqueId('m');
      const sent = await alice.ok<{ seq: number; sendTime: number; duplicate: boolean }>('send', {
        appinfo,
        to: { user: bob.user },
        type: 'text',
        body: { text: 'hello' },
      });
      expect(sent.duplicate).toBe(false);
      const again = await alice.ok<{ seq: number; duplicate: boolean }>('send', {
        appinfo,
        to: { user: bob.user },
        type: 'text',
        body: { text: 'hello' },
      });
      expect(again).toMatchObject({ seq: sent.seq, duplicate: true });
      const copy = await waitFor(async () => msgs(await bob.syncAll()).find((e) => e.appinfo === appinfo), 10_000, "bob's copy");
      expect(copy).toMatchObject({
        from: alice.user,
        conv: { type: 'user', id: alice.user },
        sendTime: sent.sendTime,
        body: { text: 'hello' },
      });

      const read = await bob.ok<{ seq: number }>('read', { seqs: [copy.seq] });
      expect((await bob.syncAll()).find((e) => e.seq === read.seq)).toMatchObject({ kind: 'read', referSeq: copy.seq });
      const receipt = await waitFor(async () => (await alice.syncAll()).find((e) => e.kind === 'receipt'), 10_000, 'receipt');
      expect(receipt).toMatchObject({ referSeq: sent.seq, readBy: [bob.user] });

      const recall = await alice.ok<{ seq: number }>('recall', { appinfo });
      expect((await alice.syncAll()).find((e) => e.seq === recall.seq)?.kind).toBe('recall');
      const theirs = await waitFor(async () => (await bob.syncAll()).find((e) => e.kind === 'recall'), 10_000, "recall in bob's inbox");
      expect(theirs.recall).toEqual({ appinfo, sendTime: sent.sendTime, from: alice.user });
      expect(msgs(await alice.syncAll()).filter((e) => e.appinfo === appinfo)).toHaveLength(1);
      expect(msgs(await bob.syncAll()).filter((e) => e.appinfo === appinfo)).toHaveLength(1);
    });

    it('a group across both gateways: one copy each, receipts, recall', async () => {
      const owner = await connect(0, uniqueId('owner'));
      const onG2 = await Promise.all([1, 2].map(() => connect(1, uniqueId('m'))));
      const onG1 = await connect(0, uniqueId('m'));
      const members = [owner, ...onG2, onG1];
      const g = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'cross', members: [onG2[0]!.user] });
      await owner.ok('group.add', { group: g.group, members: [onG2[1]!.user, onG1.user] });
      expect((await onG1.ok<{ memberCount: number }>('group.info', { group: g.group })).memberCount).toBe(4);
      const appinfo = uniqueId('g');
      const sent = await owner.ok<{ seq: number; sendTime: number }>('send', {
        appinfo,
        to: { group: g.group },
        type: 'text',
        body: { n: 1 },
      });
      const copies = await Promise.all(
        members.map((m) => waitFor(async () => msgs(await m.syncAll()).find((e) => e.appinfo === appinfo), 10_000, `copy for ${m.user}`)),
      );
      for (const c of copies) expect(c.conv).toEqual({ type: 'group', id: g.group });
      for (const m of members.slice(1))
        await waitFor(() => m.pushes.some((p) => p.entries.some((e) => e.appinfo === appinfo)), 10_000, `push to ${m.user}`);

      await Promise.all(members.slice(1).map((m, i) => m.ok('read', { seqs: [copies[i + 1]!.seq] })));
      const readers = members
        .slice(1)
        .map((m) => m.user)
        .sort();
      const receipt = await waitFor(
        async () => {
          const top = (await owner.syncAll()).filter((e) => e.kind === 'receipt' && e.referSeq === sent.seq).at(-1);
          return top?.readBy?.length === readers.length ? top : undefined;
        },
        15_000,
        'receipt read by all',
      );
      expect(receipt.readBy).toEqual(readers);

      await owner.ok('recall', { appinfo });
      for (const m of members) {
        const rec = await waitFor(async () => (await m.syncAll()).find((e) => e.kind === 'recall'), 10_000, `recall for ${m.user}`);
        expect(rec.recall).toEqual({ appinfo, sendTime: sent.sendTime, from: owner.user });
        expect(msgs(await m.syncAll()).filter((e) => e.appinfo === appinfo)).toHaveLength(1);
      }
    });

    it("a huge group's push goes once to each gateway holding members, not once per member", async () => {
      // What each worker's presence view holds before these users connect (earlier tests' users stay connected).
      const known = () => Promise.all(cluster.workers.map((w) => metricValue(w.httpUrl, 'seqline_worker_presence_inboxes')));
      const before = await known();
      const owner = await connect(0, uniqueId('owner'));
      const online = [owner, await connect(0, uniqueId('m')), ...(await Promise.all([1, 2].map(() => connect(1, uniqueId('m')))))];
      const offline = Array.from({ length: 2_100 }, (_, i) => `${uniqueId('off')}${i}`);
      const g = await owner.ok<{ group: string; tier: string }>('group.create', {
        name: 'town',
        members: [...online.slice(1).map((m) => m.user), ...offline],
      });
      expect(g.tier).toBe('huge');
      // What the workers put on the wire for group pushes: per member subject, or per gateway.
      const wire = { perMember: 0, routed: new Set<string>() };
      const nc = await connectNats({ servers: NATS_URL });
      try {
        nc.subscribe(`${cluster.namespace}.push.u.>`, {
          callback: (_e, m) => {
            if (m.json<{ group?: string }>().group === g.group) wire.perMember++;
          },
        });
        nc.subscribe(`${cluster.namespace}.push.p.to.*`, {
          callback: (_e, m) => {
            if (m.string().includes(g.group)) wire.routed.add(m.subject);
          },
        });
        await nc.flush();
        // Both workers (either may run the notify) know the 4 users online: a gateway's deltas count
        // only once applied, never while its view is being re-read, so the views are trusted now.
        await waitFor(
          async () => (await known()).every((n, i) => n >= (before[i] ?? 0) + online.length),
          10_000,
          'workers know the users online',
        );
        const appinfo = uniqueId('town');
        await owner.ok('send', { appinfo, to: { group: g.group }, type: 'text', body: { text: 'all hands' } });
        for (const m of online)
          await waitFor(() => m.groupPushes.some((p) => p.messages.some((e) => e.appinfo === appinfo)), 10_000, `group.push to ${m.user}`);
        await new Promise((r) => setTimeout(r, 300));
        expect(wire.perMember).toBe(0);
        expect(wire.routed.size).toBe(2); // one subject per gateway
        for (const m of online) expect(m.groupPushes.filter((p) => p.messages.some((e) => e.appinfo === appinfo))).toHaveLength(1);
      } finally {
        await nc.close();
      }
    });
  });
}

async function httpSend(httpUrl: string, tenant: string, user: string, to: string): Promise<{ ok: boolean }> {
  const token = await issueToken({ secret: SECRET, user, tenant, ttlSeconds: 600 });
  const res = await fetch(`${httpUrl}/v1/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ appinfo: uniqueId('h'), to: { user: to }, type: 'text', body: { via: 'http' } }),
  });
  return (await res.json()) as { ok: boolean };
}
