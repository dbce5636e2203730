/**
 * The PushBus contract over threads: what is subscribed here is published by another, real,
 * worker thread, and reaches here only because presence told that thread this one holds the
 * inbox. Each publish is relayed on the same port right after this thread's presence changes
 * (presenceSettled sends them at once), so the other thread publishes knowing every subscription
 * made here before the call — as a NATS server knows every SUB a connection sent before a PUB.
 * The same suite runs on one thread alone (every push local).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { inboxKey, silentLogger, type PushMessage } from '@seqline/core';
import { eventually, pushBusContract, uniqueName } from '@seqline/testing';
import { createThreadPushBus, ThreadHub, type ThreadPushBus } from '../src/threads.ts';
import { meshWithThreads } from './threads-harness.ts';

const { hub, threads } = meshWithThreads(2, 'thread-push-peer.ts');
const [publisher] = threads;
const ctl = hub.open('ctl', {});
afterAll(async () => {
  await publisher!.worker.terminate();
  await hub.close();
});

let opened = 0;
/** A bus whose subscriptions live on this thread and whose publishes run on the publisher thread. */
async function acrossThreads(): Promise<ThreadPushBus> {
  const channel = `push-${++opened}`;
  await ctl.request(0, { op: 'open', channel });
  const bus = createThreadPushBus({ hub, channel, logger: silentLogger });
  let tail: Promise<unknown> = Promise.resolve();
  let closed = false;
  const relay = (body: object) => {
    if (closed) return;
    void bus.presenceSettled(); // its changes leave now, ahead of the publish
    tail = ctl.request(0, { ...body, channel });
  };
  return {
    ...bus,
    publish: (msg) => relay({ op: 'publish', msg }),
    publishToEach: ({ inboxes, msg }) => relay({ op: 'publishToEach', inboxes, msg }),
    close: async () => {
      closed = true;
      await tail;
      await bus.close();
      await ctl.request(0, { op: 'close', channel });
    },
  };
}

pushBusContract('threads: published on a worker thread, subscribed here', acrossThreads);
pushBusContract('threads: one thread alone', () => createThreadPushBus({ hub: new ThreadHub({ self: 0 }) }));

describe('thread push bus presence', () => {
  it('is exact once every thread is known: online here, online there, offline; the gone thread holds nobody', async () => {
    const seats = meshWithThreads(2, 'thread-push-peer.ts');
    const peerCtl = seats.hub.open('ctl', {});
    const inbox = inboxKey(uniqueName('t'), 'alice');
    const here = createThreadPushBus({ hub: seats.hub, channel: 'p' });
    // The other thread is reachable but has not told what it holds: nobody can say.
    expect(here.isOnline(inbox)).toBe(undefined);
    await peerCtl.request(0, { op: 'open', channel: 'p' });
    await eventually(() => expect(here.stats()).toMatchObject({ threads: 1, known: 1 }));
    expect(here.isOnline(inbox)).toBe(false);
    const unsubscribe = here.subscribe({ inbox, onPush: () => undefined });
    expect(here.isOnline(inbox)).toBe(true);
    unsubscribe();
    expect(here.isOnline(inbox)).toBe(false);
    await seats.threads[0]!.worker.terminate();
    await eventually(() => expect(here.stats()).toEqual({ threads: 0, known: 0, keys: 0 }));
    expect(here.isOnline(inbox)).toBe(false);
    await here.close();
    await seats.hub.close();
  });

  it('publishToEach sends one message per thread holding members, not one per member', async () => {
    const { port1, port2 } = new (await import('node:worker_threads')).MessageChannel();
    const [a, b] = [new ThreadHub({ self: 0 }), new ThreadHub({ self: 1 })];
    let frames = 0;
    a.connect(1, port1);
    b.connect(0, {
      postMessage: (v) => port2.postMessage(v),
      on: (event: 'message' | 'close', listener: (value: unknown) => void) =>
        port2.on(event, event === 'message' ? (v: unknown) => (frames++, listener(v)) : listener),
      close: () => port2.close(),
    });
    const [busA, busB] = [createThreadPushBus({ hub: a }), createThreadPushBus({ hub: b })];
    const tenant = uniqueName('t');
    const members = Array.from({ length: 50 }, (_, i) => inboxKey(tenant, `m${i}`));
    const got: PushMessage[] = [];
    for (const m of members) busB.subscribe({ inbox: m, onPush: (msg) => got.push(msg) });
    await busB.presenceSettled();
    const before = frames;
    busA.publishToEach({ inboxes: [...members, inboxKey(tenant, 'offline')], msg: { prevSeq: 3, entries: [], group: 'g' } });
    await eventually(() => expect(got).toHaveLength(50));
    expect(frames - before).toBe(1);
    expect(got.map((m) => m.inbox)).toEqual(members);
    await Promise.all([busA.close(), busB.close()]);
    await Promise.all([a.close(), b.close()]);
  });
});
