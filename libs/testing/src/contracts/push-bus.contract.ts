/**
 * Contract suite of the PushBus port. Every adapter runs it: the local one in embedded mode and
 * the NATS one against a real server. Each test uses fresh inbox names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import type { Entry, InboxKey, PushBus, PushMessage } from '@seqline/core';
import { eventually, sleep, uniqueName } from './bus.ts';

export type OpenPushBus = () => PushBus | Promise<PushBus>;

const push = (inbox: InboxKey, prevSeq: number, text = `m${prevSeq}`): PushMessage => ({
  inbox,
  prevSeq,
  entries: [
    {
      seq: prevSeq + 1,
      kind: 'msg',
      appinfo: `app-${inbox}-${prevSeq}`,
      conv: { type: 'user', id: 'peer' },
      from: 'peer',
      sendTime: 1_700_000_000_000 + prevSeq,
      type: 'text',
      body: { text },
    } satisfies Entry,
  ],
});

export function pushBusContract(name: string, open: OpenPushBus): void {
  describe(`PushBus contract: ${name}`, () => {
    const opened: PushBus[] = [];
    const openBus = async () => {
      const bus = await open();
      opened.push(bus);
      return bus;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((bus) => bus.close()));
    });
    const fresh = async (user: string) => ({ bus: await openBus(), inbox: inboxKey(uniqueName('t'), user) });

    it('delivers a push to the subscriber of its inbox, intact', async () => {
      const { bus, inbox } = await fresh('alice');
      const got: PushMessage[] = [];
      bus.subscribe({ inbox, onPush: (msg) => got.push(msg) });
      const sent: PushMessage = { ...push(inbox, 41, 'héllo ✓'), group: 'g.1' };
      bus.publish(sent);
      await eventually(() => expect(got).toEqual([sent]));
    });

    it('keeps inboxes apart, including keys with dots, colons and wildcard characters', async () => {
      const bus = await openBus();
      const tenant = uniqueName('t');
      const users = ['a.b', 'a_b', 'a:b', 'a*b', 'a>b', 'a b', 'A.B', 'ü.é', 'a', 'a.b.'];
      const got = new Map<string, number[]>();
      for (const user of users)
        bus.subscribe({ inbox: inboxKey(tenant, user), onPush: (msg) => got.set(user, [...(got.get(user) ?? []), msg.prevSeq]) });
      users.forEach((user, i) => bus.publish(push(inboxKey(tenant, user), i)));
      await eventually(() => expect(got.size).toBe(users.length));
      await sleep(100);
      expect(users.map((user) => got.get(user))).toEqual(users.map((_, i) => [i]));
    });

    it('fans out to several subscribers of one inbox; unsubscribe stops only that one', async () => {
      const { bus, inbox } = await fresh('bob');
      const [a, b]: [number[], number[]] = [[], []];
      const unsubscribeA = bus.subscribe({ inbox, onPush: (msg) => a.push(msg.prevSeq) });
      bus.subscribe({ inbox, onPush: (msg) => b.push(msg.prevSeq) });
      bus.publish(push(inbox, 1));
      await eventually(() => expect([a, b]).toEqual([[1], [1]]));
      unsubscribeA();
      unsubscribeA(); // idempotent
      bus.publish(push(inbox, 2));
      await eventually(() => expect(b).toEqual([1, 2]));
      await sleep(100);
      expect(a).toEqual([1]);
    });

    it('a throwing subscriber breaks neither the others nor later pushes', async () => {
      const { bus, inbox } = await fresh('carol');
      const got: number[] = [];
      bus.subscribe({
        inbox,
        onPush: () => {
          throw new Error('subscriber bug');
        },
      });
      bus.subscribe({ inbox, onPush: (msg) => got.push(msg.prevSeq) });
      bus.publish(push(inbox, 1));
      bus.publish(push(inbox, 2));
      await eventually(() => expect(got).toEqual([1, 2]));
    });

    it('delivers the pushes of one inbox in publish order', async () => {
      const { bus, inbox } = await fresh('dave');
      const got: number[] = [];
      bus.subscribe({ inbox, onPush: (msg) => got.push(msg.prevSeq) });
      const expected = Array.from({ length: 200 }, (_, i) => i);
      for (const i of expected) bus.publish(push(inbox, i));
      await eventually(() => expect(got).toEqual(expected));
    });

    it('publishToEach delivers one push to each named inbox, each with its own inbox, and to no other', async () => {
      const bus = await openBus();
      const tenant = uniqueName('t');
      const users = ['m1', 'm.2', 'm3', 'not-named'];
      const got = new Map<string, PushMessage[]>();
      for (const user of users)
        bus.subscribe({ inbox: inboxKey(tenant, user), onPush: (msg) => got.set(user, [...(got.get(user) ?? []), msg]) });
      const { inbox: _unused, ...shared } = { ...push(inboxKey(tenant, 'x'), 7, 'to all'), group: 'town' };
      bus.publishToEach({ inboxes: users.slice(0, 3).map((u) => inboxKey(tenant, u)), msg: shared });
      bus.publishToEach({ inboxes: [], msg: shared }); // nothing to do
      await eventually(() => expect(got.size).toBe(3));
      await sleep(100);
      for (const user of users.slice(0, 3)) expect(got.get(user)).toEqual([{ ...shared, inbox: inboxKey(tenant, user) }]);
      expect(got.has('not-named')).toBe(false);
    });

    it('stops delivering after the last unsubscribe, and after close', async () => {
      const { bus, inbox } = await fresh('erin');
      const got: number[] = [];
      const unsubscribe = bus.subscribe({ inbox, onPush: (msg) => got.push(msg.prevSeq) });
      bus.publish(push(inbox, 1));
      await eventually(() => expect(got).toEqual([1]));
      unsubscribe();
      bus.publish(push(inbox, 2));
      bus.subscribe({ inbox, onPush: (msg) => got.push(msg.prevSeq) });
      bus.publish(push(inbox, 3));
      await eventually(() => expect(got).toEqual([1, 3]));
      await bus.close();
      expect(() => bus.publish(push(inbox, 4))).not.toThrow();
      await sleep(100);
      expect(got).toEqual([1, 3]);
    });
  });
}
