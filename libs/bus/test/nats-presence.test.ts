/**
 * Presence-routed pushes on a real NATS server: a push to many inboxes goes once to each
 * gateway bus holding some of them (not once per member), reaches exactly the named inboxes
 * held there, and falls back to one publish per inbox whenever the publisher cannot trust
 * its view (just started, a gateway being re-read).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import type { InboxKey, PushBus, PushMessage } from '@seqline/core';
import { eventually, requireServices, uniqueName } from '@seqline/testing';
import { createNatsPushBus, type NatsPushBus } from '../src/index.ts';
import { connectNats, probeNats } from './nats-harness.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const probe = await probeNats();
const heartbeatMs = 100;
/** Until the worker routes, knowing `gateways` gateways and `inboxes` inboxes on them. */
const routing = (worker: NatsPushBus, gateways: number, inboxes: number) =>
  eventually(() => {
    expect(worker.stats().presence).toEqual({ ready: true, gateways, inboxes });
  });

if (requireServices(probe, 'NATS presence routing', 'a NATS server', 'start one with scripts/services.sh up or set NATS_URL')) {
  describe('nats push bus: presence routing', () => {
    const opened: { bus?: NatsPushBus; nc: NatsConnection }[] = [];
    afterEach(async () => {
      for (const { bus, nc } of opened.splice(0)) {
        await bus?.close();
        await nc.close().catch(() => undefined);
      }
    });

    const setup = async () => {
      const root = uniqueName('pr');
      const tenant = uniqueName('t');
      const open = async (name: string) => {
        const nc = await connectNats(name);
        const bus = createNatsPushBus(nc, { subjectRoot: `${root}.u`, presenceRoot: `${root}.p`, presenceHeartbeatMs: heartbeatMs });
        opened.push({ bus, nc });
        return { bus, nc };
      };
      // Counts what publishers put on the wire: per-inbox pushes and routed (per-bus) pushes.
      // A bare connection, no bus: it must not announce presence or follow it.
      const tapNc = await connectNats('tap');
      opened.push({ nc: tapNc });
      const wire = { perInbox: 0, routed: [] as string[] };
      tapNc.subscribe(`${root}.u.>`, {
        callback: () => {
          wire.perInbox++;
        },
      });
      tapNc.subscribe(`${root}.p.to.*`, {
        callback: (_e, m) => {
          wire.routed.push(m.subject);
        },
      });
      await tapNc.flush();
      const got = new Map<string, PushMessage[]>();
      const hold = (bus: PushBus, user: string) =>
        bus.subscribe({ inbox: inboxKey(tenant, user), onPush: (m) => got.set(`${user}`, [...(got.get(user) ?? []), m]) });
      return { open, wire, got, hold, key: (user: string): InboxKey => inboxKey(tenant, user), flush: () => tapNc.flush() };
    };
    const shared = (text: string): Omit<PushMessage, 'inbox'> => ({
      prevSeq: 9,
      group: 'town',
      entries: [
        {
          seq: 10,
          kind: 'msg',
          appinfo: `a-${text}`,
          conv: { type: 'group', id: 'town' },
          from: 'x',
          sendTime: 1,
          type: 'text',
          body: { text },
        },
      ],
    });

    it('publishes once per gateway holding members, not once per member, and reaches exactly the named inboxes', async () => {
      const { open, wire, got, hold, key, flush } = await setup();
      const a = await open('gw-a');
      const b = await open('gw-b');
      const c = await open('gw-c');
      const worker = await open('worker');
      hold(a.bus, 'alice');
      hold(a.bus, 'bob');
      hold(b.bus, 'carol');
      hold(c.bus, 'zed'); // online, not named
      const offline = Array.from({ length: 500 }, (_, i) => `off${i}`);
      const targets = ['alice', 'bob', 'carol', 'dave', ...offline].map(key);
      await Promise.all([a, b, c].map((gw) => gw.nc.flush())); // their subscriptions are on the server

      // Just started, the worker cannot know who is where: one publish per inbox, all delivered.
      worker.bus.publishToEach({ inboxes: targets, msg: shared('early') });
      await eventually(() => expect([...got.keys()].sort()).toEqual(['alice', 'bob', 'carol']));
      // The worker's publishes are on the server, then on the tap (flushes are ordered per connection).
      await worker.nc.flush();
      await flush();
      expect(wire.perInbox).toBe(targets.length);

      await routing(worker.bus, 3, 4);
      got.clear();
      wire.perInbox = 0;
      worker.bus.publishToEach({ inboxes: targets, msg: shared('routed') });
      await eventually(() => expect([...got.keys()].sort()).toEqual(['alice', 'bob', 'carol']));
      await sleep(100);
      for (const user of ['alice', 'bob', 'carol']) expect(got.get(user)).toEqual([{ ...shared('routed'), inbox: key(user) }]);
      expect(wire.perInbox).toBe(0);
      expect(wire.routed).toHaveLength(2);
    });

    it('follows users between gateways, delivers to both of a user on two, and drops a gateway that leaves', async () => {
      const { open, wire, got, hold, key } = await setup();
      const a = await open('gw-a');
      const b = await open('gw-b');
      const worker = await open('worker');
      const leaveA = hold(a.bus, 'alice');
      hold(a.bus, 'bob');
      worker.bus.publishToEach({ inboxes: [key('alice')], msg: shared('warm') }); // starts the worker's directory
      await routing(worker.bus, 1, 2);

      leaveA();
      hold(b.bus, 'alice');
      hold(b.bus, 'bob'); // bob on two devices, one per gateway
      await routing(worker.bus, 2, 3);
      got.clear();
      wire.routed.length = 0;
      worker.bus.publishToEach({ inboxes: [key('alice'), key('bob')], msg: shared('moved') });
      await eventually(() => expect(got.get('bob')).toHaveLength(2));
      expect(got.get('alice')).toHaveLength(1);
      expect(wire.routed).toHaveLength(2);

      // A clean close says goodbye: the worker stops publishing to it at once.
      await a.bus.close();
      await routing(worker.bus, 1, 2);
      wire.routed.length = 0;
      worker.bus.publishToEach({ inboxes: [key('bob')], msg: shared('after-bye') });
      await eventually(() => expect(wire.routed).toHaveLength(1));
      await sleep(50);
      expect(wire.routed).toHaveLength(1);
    });

    it('forgets a gateway killed without a goodbye once its heartbeats stop', async () => {
      const { open, wire, hold, key, flush } = await setup();
      const a = await open('gw-a');
      const worker = await open('worker');
      hold(a.bus, 'alice');
      worker.bus.publishToEach({ inboxes: [key('alice')], msg: shared('warm') });
      await routing(worker.bus, 1, 1);
      wire.routed.length = 0;
      worker.bus.publishToEach({ inboxes: [key('alice')], msg: shared('alive') });
      await eventually(() => expect(wire.routed).toHaveLength(1));

      await a.nc.close(); // its process gone: no goodbye, no more heartbeats
      await routing(worker.bus, 0, 0); // forgotten 3.5 heartbeats after its last
      wire.routed.length = 0;
      wire.perInbox = 0;
      worker.bus.publishToEach({ inboxes: [key('alice')], msg: shared('dead') });
      await flush();
      await sleep(50);
      expect(wire.routed).toEqual([]);
      expect(wire.perInbox).toBe(0);
    });

    it('a worker started after its gateways learns them whole, snapshots in parts', async () => {
      const { open, wire, got, hold, key } = await setup();
      const a = await open('gw-a');
      const users = Array.from({ length: 2_500 }, (_, i) => `u${i}`);
      for (const user of users) hold(a.bus, user);
      await sleep(heartbeatMs * 2); // its deltas are long gone when the worker starts

      const worker = await open('worker');
      worker.bus.publishToEach({ inboxes: [key('u0')], msg: shared('warm') });
      await routing(worker.bus, 1, users.length);
      got.clear();
      wire.perInbox = 0;
      wire.routed.length = 0;
      worker.bus.publishToEach({ inboxes: users.map(key), msg: shared('all') });
      await eventually(() => expect(got.size).toBe(users.length));
      expect(wire.perInbox).toBe(0);
      expect(wire.routed).toHaveLength(3); // 1 000 inboxes per routed message
    });
  });
}
