/**
 * `PushBus.isOnline` (offline notifications): the local bus knows its subscribers; a NATS bus
 * knows its own subscriptions and, when it follows presence, every gateway's — and says
 * "cannot know" (undefined) while it does not follow or cannot trust what it follows yet.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import { eventually, requireServices, uniqueName } from '@seqline/testing';
import { createLocalPushBus, createNatsPushBus, type NatsPushBus } from '../src/index.ts';
import { connectNats, probeNats } from './nats-harness.ts';

describe('local push bus: isOnline', () => {
  it('true while the inbox has a subscriber, false before and after', () => {
    const bus = createLocalPushBus();
    const bob = inboxKey('t', 'bob');
    expect(bus.isOnline(bob)).toBe(false);
    const off1 = bus.subscribe({ inbox: bob, onPush: () => {} });
    const off2 = bus.subscribe({ inbox: bob, onPush: () => {} });
    expect(bus.isOnline(bob)).toBe(true);
    off1();
    expect(bus.isOnline(bob)).toBe(true);
    off2();
    expect(bus.isOnline(bob)).toBe(false);
    expect(bus.isOnline(inboxKey('other', 'bob'))).toBe(false);
  });
});

const probe = await probeNats();
if (requireServices(probe, 'NATS isOnline', 'a NATS server', 'start one with scripts/services.sh up or set NATS_URL')) {
  describe('nats push bus: isOnline', () => {
    const opened: { bus: NatsPushBus; nc: NatsConnection }[] = [];
    afterEach(async () => {
      for (const { bus, nc } of opened.splice(0)) {
        await bus.close();
        await nc.close().catch(() => undefined);
      }
    });
    const heartbeatMs = 100;

    it("a worker following presence sees a gateway's sockets come and go; unknown until it can trust its view", async () => {
      const root = uniqueName('on');
      const open = async (name: string, followPresence: boolean) => {
        const nc = await connectNats(name);
        const bus = createNatsPushBus(nc, {
          subjectRoot: `${root}.u`,
          presenceRoot: `${root}.p`,
          presenceHeartbeatMs: heartbeatMs,
          followPresence,
        });
        opened.push({ bus, nc });
        return bus;
      };
      const gateway = await open('gw', false);
      const worker = await open('worker', true);
      const bob = inboxKey(uniqueName('t'), 'bob');
      // Just started: the directory is not trusted before every gateway had time to heartbeat.
      expect(worker.isOnline(bob)).toBeUndefined();
      // A bus that does not follow presence cannot know about other buses' sockets.
      expect(gateway.isOnline(bob)).toBeUndefined();
      const off = gateway.subscribe({ inbox: bob, onPush: () => {} });
      expect(gateway.isOnline(bob)).toBe(true); // its own socket: known at once
      await eventually(() => expect(worker.isOnline(bob)).toBe(true));
      off();
      await eventually(() => expect(worker.isOnline(bob)).toBe(false));
      expect(worker.isOnline(inboxKey('t', 'nobody'))).toBe(false);
    });
  });
}
