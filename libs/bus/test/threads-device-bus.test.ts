/**
 * The DeviceBus contract over threads. Its rig inspects each gateway's sessions (HolderDouble)
 * as they are kicked, so the gateways are hubs in this thread, joined by real MessageChannels
 * like the threads of a process; a gateway's `delay` holds what its ports send. A gateway with
 * its network down is a hub joined to nobody.
 */
import { MessageChannel } from 'node:worker_threads';
import { expect, it } from 'vitest';
import { deviceBusContract, eventually, HolderDouble, recordingLogger } from '@seqline/testing';
import { createThreadDeviceBus, ThreadHub, type ThreadDeviceBus, type ThreadPort } from '../src/threads.ts';

/** A port whose sends are held `delay.ms` (in order) from when they were made. */
function delayingPort(port: ThreadPort, delay: { ms: number }): ThreadPort {
  let last = 0;
  return {
    postMessage(value: unknown): void {
      if (delay.ms <= 0 && last <= Date.now()) return port.postMessage(value);
      last = Math.max(last, Date.now() + delay.ms);
      setTimeout(() => port.postMessage(value), last - Date.now());
    },
    on: (event: 'message' | 'close', listener: (value: unknown) => void) => port.on(event as 'message', listener),
    close: () => port.close(),
  };
}

let hubs: Array<{ hub: ThreadHub; delay: { ms: number } }> = [];

deviceBusContract('threads over message ports', {
  async open(holder, { logger, answerWaitMs, maxWaitMs, offline }) {
    const hub = new ThreadHub({ self: hubs.length, logger });
    const delay = { ms: 0 };
    if (!offline) {
      for (const other of hubs) {
        const { port1, port2 } = new MessageChannel();
        hub.connect(other.hub.self, delayingPort(port1, delay));
        other.hub.connect(hub.self, delayingPort(port2, other.delay));
      }
    }
    hubs.push({ hub, delay: offline ? { ms: 0 } : delay });
    const bus = createThreadDeviceBus(holder, { hub, logger, answerWaitMs, maxWaitMs });
    return { bus, delay: (ms) => (delay.ms = ms) };
  },
  network: {
    known: (asker, tenant, user, count) =>
      eventually(() => ((asker as ThreadDeviceBus).threadsHolding(tenant, user)?.length ?? 0) >= count, 10_000),
  },
  async cleanup() {
    await Promise.all(hubs.map(({ hub }) => hub.close()));
    hubs = [];
  },
});

it('a thread that goes in the middle of a login took its sessions with it: the login is served `told`, at once', async () => {
  const [a, b] = [new ThreadHub({ self: 0 }), new ThreadHub({ self: 1 })];
  const { port1, port2 } = new MessageChannel();
  a.connect(1, port1);
  b.connect(0, port2);
  const [holderA, holderB] = [new HolderDouble('a'), new HolderDouble('b')];
  const logger = recordingLogger();
  const busA = createThreadDeviceBus(holderA, { hub: a, logger, answerWaitMs: 5_000, maxWaitMs: 10_000 });
  const busB = createThreadDeviceBus(holderB, { hub: b, logger, answerWaitMs: 5_000, maxWaitMs: 10_000 });
  busB.hold('t', 'alice');
  holderB.add('t', 'alice', { plat: 'ios' });
  holderB.mode = 'never'; // b's kick never tells…
  busA.hold('t', 'alice');
  const login = holderA.add('t', 'alice', { plat: 'ios' });
  await eventually(() => expect(busA.threadsHolding('t', 'alice')).toEqual([1]));
  const started = performance.now();
  const outcome = busA.displace({ tenant: 't', user: 'alice', policy: 'one-per-platform', incoming: login });
  await eventually(() => expect(holderB.list('t', 'alice')).toEqual([]));
  port2.close(); // …and its thread ends: its port closes
  expect(await outcome).toBe('told');
  expect(performance.now() - started).toBeLessThan(5_000);
  await busA.close();
  await a.close();
});

it("a session another thread opened a moment ago, not yet in its presence message, is still signed out by a login's round", async () => {
  const [a, b] = [new ThreadHub({ self: 0 }), new ThreadHub({ self: 1 })];
  const { port1, port2 } = new MessageChannel();
  const fromB = { ms: 0 };
  a.connect(1, port1);
  b.connect(0, delayingPort(port2, fromB));
  const [holderA, holderB] = [new HolderDouble('a'), new HolderDouble('b')];
  const logger = recordingLogger();
  const busA = createThreadDeviceBus(holderA, { hub: a, logger, answerWaitMs: 5_000, maxWaitMs: 10_000 });
  const busB = createThreadDeviceBus(holderB, { hub: b, logger, answerWaitMs: 5_000, maxWaitMs: 10_000 });
  // a knows b's whole set: b holds nobody.
  await eventually(() => expect(busA.threadsHolding('t', 'alice')).toEqual([]));
  // b's news reaches a 300 ms late: its new session is not in a's presence when a's login runs.
  fromB.ms = 300;
  busB.hold('t', 'alice');
  holderB.add('t', 'alice', { plat: 'ios' });
  busA.hold('t', 'alice');
  const login = holderA.add('t', 'alice', { plat: 'ios' });
  expect(busA.threadsHolding('t', 'alice')).toEqual([]);
  const outcome = busA.displace({ tenant: 't', user: 'alice', policy: 'one-per-platform', incoming: login });
  expect(['told', 'bound']).toContain(await outcome);
  await eventually(() => expect(holderB.list('t', 'alice')).toEqual([]), 5_000);
  await busA.close();
  await busB.close();
  await Promise.all([a.close(), b.close()]);
});
