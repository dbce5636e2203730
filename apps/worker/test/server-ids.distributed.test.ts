/**
 * Server-made ids name their whole scope, on the distributed stack: a gateway and a worker on
 * Cassandra, Redis and NATS. Every job goes into one JetStream stream deduplicated by
 * `Nats-Msg-Id` over a window (2 minutes), so two jobs that shared an id within it ran once.
 * Two honest clients whose appinfo is a local counter, cs1 and cs2, both use `local-1` in one
 * tenant: every job either makes must run. The embedded run of the same scenarios is
 * libs/messaging/test/server-ids.test.ts. The tiers are the defaults (the settings row is
 * shared by the keyspace): 2 000 members who never connect make a group huge.
 */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type TestClient } from '../../server/test/harness.ts';
import { metricValue } from './support/clients.ts';
import { uniqueId } from './support/cluster.ts';
import { offlineFillers, useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

const SECRET = 'server-ids-secret-0123456789';
const LOCAL = 'local-1';
const text = (t: string) => ({ type: 'text', body: { text: t } });

interface NotifyBody {
  type: string;
  user: string;
  entries: Array<{ seq: number; appinfo: string }>;
}

if (requireServices(await probeAll(), 'server-made ids on the distributed stack')) {
  let afterSend: HookReceiver | undefined;
  let notify: HookReceiver | undefined;
  beforeAll(async () => {
    afterSend = await startHookReceiver({ secret: SECRET });
    notify = await startHookReceiver({ secret: SECRET });
  });
  afterAll(async () => {
    await afterSend?.close();
    await notify?.close();
  });
  const stack = useOneNodeCluster({
    env: () => ({
      SEQLINE_HOOK_SECRET: SECRET,
      SEQLINE_AFTER_SEND_URL: afterSend!.url,
      SEQLINE_NOTIFY_URL: notify!.url,
      SEQLINE_NOTIFY_WINDOW_MS: '200',
    }),
  });
  const users = (...prefixes: string[]) => Promise.all(prefixes.map((p) => stack.connect(uniqueId(p))));

  /** Waits until `c` holds `from`'s local-1 as a message (or its recall). */
  async function holds(c: TestClient, from: string, kind: 'msg' | 'recall'): Promise<void> {
    await waitFor(
      async () =>
        (await c.syncAll()).some((e) =>
          kind === 'msg'
            ? e.kind === 'msg' && e.appinfo === LOCAL && e.from === from
            : e.kind === 'recall' && e.recall?.appinfo === LOCAL && e.from === from,
        ),
      20_000,
      `${c.user} to hold the ${kind} of ${from}'s ${LOCAL}`,
    );
  }

  describe('server-made ids name the sender (distributed)', () => {
    it('group fanout: cs1 in G1 and cs2 in G2 both send local-1; both groups receive it', async () => {
      const [cs1, cs2, m1, m2] = (await users('cs1', 'cs2', 'm1', 'm2')) as [TestClient, TestClient, TestClient, TestClient];
      const g1 = (await cs1.ok<{ group: string }>('group.create', { name: 'g1', members: [m1.user] })).group;
      const g2 = (await cs2.ok<{ group: string }>('group.create', { name: 'g2', members: [m2.user] })).group;
      expect(await cs1.ok('send', { appinfo: LOCAL, to: { group: g1 }, ...text('from cs1') })).toMatchObject({ duplicate: false });
      expect(await cs2.ok('send', { appinfo: LOCAL, to: { group: g2 }, ...text('from cs2') })).toMatchObject({ duplicate: false });
      await holds(m1, cs1.user, 'msg');
      await holds(m2, cs2.user, 'msg');
    });

    it('recalls: cs1 and cs2 each recall their own local-1 (1:1, so no fanout job came before); both peers get the recall', async () => {
      const [cs1, cs2, m1, m2] = (await users('cs1', 'cs2', 'm1', 'm2')) as [TestClient, TestClient, TestClient, TestClient];
      await cs1.ok('send', { appinfo: LOCAL, to: { user: m1.user }, ...text('from cs1') });
      await cs2.ok('send', { appinfo: LOCAL, to: { user: m2.user }, ...text('from cs2') });
      await holds(m1, cs1.user, 'msg');
      await holds(m2, cs2.user, 'msg');
      await cs1.ok('recall', { appinfo: LOCAL });
      await cs2.ok('recall', { appinfo: LOCAL });
      await holds(m1, cs1.user, 'recall');
      await holds(m2, cs2.user, 'recall');
    });

    it('after-send: cs1 and cs2 both send local-1; the app hears of both', async () => {
      const [cs1, cs2] = (await users('cs1', 'cs2')) as [TestClient, TestClient];
      await cs1.ok('send', { appinfo: LOCAL, to: { user: uniqueId('p1') }, ...text('from cs1') });
      await cs2.ok('send', { appinfo: LOCAL, to: { user: uniqueId('p2') }, ...text('from cs2') });
      const heard = () =>
        afterSend!
          .accepted()
          .map((c) => c.json as { from: string; appinfo: string })
          .filter((j) => j.appinfo === LOCAL && (j.from === cs1.user || j.from === cs2.user))
          .map((j) => j.from);
      await waitFor(() => heard().length >= 2, 20_000, 'both after-send calls');
      expect(heard().sort()).toEqual([cs1.user, cs2.user].sort());
    });

    it('huge-group mentions: cs1 names m1 in H1, cs2 names m2 in H2, both with local-1; both get their copy', async () => {
      const [cs1, cs2, m1, m2] = (await users('cs1', 'cs2', 'm1', 'm2')) as [TestClient, TestClient, TestClient, TestClient];
      const h1 = await cs1.ok<{ group: string; tier: string }>('group.create', { name: 'h1', members: [m1.user, ...offlineFillers()] });
      const h2 = await cs2.ok<{ group: string; tier: string }>('group.create', { name: 'h2', members: [m2.user, ...offlineFillers()] });
      expect([h1.tier, h2.tier]).toEqual(['huge', 'huge']);
      await cs1.ok('send', { appinfo: LOCAL, to: { group: h1.group }, mentions: [m1.user], ...text('@m1') });
      await cs2.ok('send', { appinfo: LOCAL, to: { group: h2.group }, mentions: [m2.user], ...text('@m2') });
      await holds(m1, cs1.user, 'msg');
      await holds(m2, cs2.user, 'msg');
    }, 120_000);

    it('the two notify jobs: user x offline, and group x with a message whose appinfo is the first seq of x; both run', async () => {
      const app = notify!;
      const x = uniqueId('x');
      const callsForX = () => app.calls.map((c) => c.json as NotifyBody | undefined).filter((b) => b?.user === x);
      // The app is down: x's notification job fails and is retried.
      app.setMode({ kind: 'status', status: 500 });
      try {
        const [a] = (await users('a')) as [TestClient];
        await a.ok('send', { appinfo: uniqueId('to-x'), to: { user: x }, ...text('hi x') });
        const firstSeq = String((await waitFor(() => callsForX()[0], 20_000, 'a notify call for x')).entries[0]!.seq);
        // Group `x` (group and user ids are separate), huge: its messages reach members by a notify job.
        const worker = stack.cluster.workers[0]!.httpUrl;
        const known = await metricValue(worker, 'seqline_worker_presence_inboxes');
        const [owner, m1] = (await users('o', 'm')) as [TestClient, TestClient];
        await waitFor(
          async () => (await metricValue(worker, 'seqline_worker_presence_inboxes')) >= known + 2,
          10_000,
          'the worker knows m online',
        );
        const g = await owner.ok<{ group: string; tier: string }>('group.create', {
          name: 'x',
          group: x,
          members: [m1.user, ...offlineFillers()],
        });
        expect(g).toMatchObject({ group: x, tier: 'huge' });
        await owner.ok('send', { appinfo: firstSeq, to: { group: x }, ...text('in group x') });
        await waitFor(
          () => m1.groupPushes.some((p) => p.group === x && p.messages.some((e) => e.appinfo === firstSeq)),
          20_000,
          'the group push of the message',
        );
      } finally {
        app.setMode({ kind: 'ok' });
      }
      await waitFor(() => app.accepted().some((c) => (c.json as NotifyBody).user === x), 30_000, 'x notified once the app is back');
    }, 120_000);
  });
}
