/**
 * Offline notifications on the distributed stack against a failing receiver and hostile jobs:
 * a receiver answering 500 gets the notification once it recovers (JetStream redelivery), and
 * malformed jobs put straight on the worker's `hooks.notify` queue neither crash the worker nor
 * reach the receiver, while genuine notifications keep flowing.
 */
import { connect } from '@nats-io/transport-node';
import { createNatsWorkQueue } from '@seqline/bus';
import { silentLogger, type Json } from '@seqline/core';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../server/test/harness.ts';
import { NOTIFY_SECRET, notifyEnv } from '../../server/test/offline-notify-scenarios.ts';
import { uniqueId } from './support/cluster.ts';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { NATS_URL, probeAll, requireServices } from './support/services.ts';

interface NotifyBody {
  user: string;
  badge: number;
  entries: unknown[];
}

if (requireServices(await probeAll(), 'offline notifications (hostile) on the distributed stack')) {
  let receiver: HookReceiver;
  beforeAll(async () => {
    receiver = await startHookReceiver({ secret: NOTIFY_SECRET });
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const node = useOneNodeCluster({ env: () => notifyEnv(receiver) });
  const connectClient = (user: string) => node.connect(user);
  const callsFor = (user: string) => receiver.calls.filter((c) => (c.json as NotifyBody | undefined)?.user === user);
  const acceptedFor = (user: string) =>
    receiver
      .accepted()
      .map((c) => c.json as NotifyBody)
      .filter((b) => b.user === user);

  describe('offline notifications (distributed, hostile)', () => {
    it('a receiver answering 500 gets the notification once it recovers', async () => {
      const alice = await connectClient(uniqueId('alice'));
      const bob = uniqueId('bob');
      receiver.setMode({ kind: 'status', status: 500 });
      try {
        await alice.ok('send', { appinfo: uniqueId('a'), to: { user: bob }, type: 'text', body: { text: 'hi' } });
        await waitFor(async () => callsFor(bob).length >= 1, 20_000, 'a failed try');
        expect(acceptedFor(bob)).toEqual([]);
      } finally {
        receiver.setMode({ kind: 'ok' });
      }
      await waitFor(async () => acceptedFor(bob).length === 1, 30_000, 'delivery after recovery');
      expect(acceptedFor(bob)[0]).toMatchObject({ user: bob, badge: 1 });
    });

    it('malformed jobs on hooks.notify reach no receiver and stop nothing', async () => {
      const ns = node.cluster.namespace;
      const nc = await connect({ servers: NATS_URL });
      const queue = createNatsWorkQueue({ nc, logger: silentLogger, streamPrefix: ns.toUpperCase(), subjectPrefix: `${ns}.` });
      const before = receiver.calls.length;
      const bad: Json[] = [
        null,
        [1, 2],
        { tenant: node.cluster.tenant, user: 'x' },
        { tenant: node.cluster.tenant, user: 'x', entries: [{ seq: 'one' }] },
      ];
      try {
        for (const [i, payload] of bad.entries()) await queue.enqueue({ queue: 'hooks.notify', id: uniqueId(`notify:bad${i}:`), payload });
      } finally {
        await queue.close();
        await nc.close();
      }
      const alice = await connectClient(uniqueId('alice'));
      const carol = uniqueId('carol');
      await alice.ok('send', { appinfo: uniqueId('a'), to: { user: carol }, type: 'text', body: { text: 'still here' } });
      await waitFor(async () => acceptedFor(carol).length === 1, 20_000, 'a genuine notification');
      // Only carol's call arrived: the malformed jobs made none.
      expect(receiver.calls.slice(before).map((c) => (c.json as NotifyBody).user)).toEqual([carol]);
      expect(node.cluster.workers.every((w) => w.alive)).toBe(true);
    });
  });
}
