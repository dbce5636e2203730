/**
 * The workers over the real embedded engine, started on only the part of the deps they declare
 * (WorkerDeps): the per-tier fanout, the huge-group push and nothing else. The pre-0.1 `fanout`
 * queue is no longer consumed: a job put there is neither run nor lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, type Entry, type PushMessage } from '@seqline/core';
import { createMessaging, FANOUT_QUEUES, startWorkers, type Messaging, type WorkerDeps, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

let rig: EmbeddedRig;
let messaging: Messaging;
let workers: Workers;
const alice = { tenant: 't', user: 'alice' };

beforeAll(async () => {
  rig = await openEmbeddedRig('workers');
  messaging = createMessaging(rig.deps);
  // Exactly what WorkerDeps names, nothing more: an access outside it would throw at run time.
  const narrow: WorkerDeps = {
    stores: { groups: rig.deps.stores.groups, conversations: rig.deps.stores.conversations, groupStreams: rig.deps.stores.groupStreams },
    writers: { inbox: rig.deps.writers.inbox },
    queue: rig.deps.queue,
    push: rig.deps.push,
    policy: { limits: rig.deps.policy.limits },
    env: { logger: rig.deps.env.logger },
    hooks: rig.deps.hooks,
  };
  workers = await startWorkers(narrow);
});
afterAll(async () => {
  workers.stop();
  await rig.close();
});

async function inbox(user: string): Promise<Entry[]> {
  return rig.engine.timeline.readAfter({ inbox: inboxKey('t', user), afterSeq: 0, limit: 1_000 });
}

async function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('workers on their narrow deps', () => {
  it('consume the three tier queues, notify, receipts and after-send, and no other queue', () => {
    expect(Object.keys(rig.queue.stats()).sort()).toEqual(
      [FANOUT_QUEUES.huge, FANOUT_QUEUES.large, FANOUT_QUEUES.small, 'notify.huge', 'receipts', 'hooks.after-send', 'hooks.notify'].sort(),
    );
  });

  it('write-fanout of a small group reaches every member inbox once', async () => {
    await messaging.createGroup(alice, { name: 'pair', id: 'pair', members: ['bo'] });
    await messaging.send(alice, { appinfo: 'w-1', to: { group: 'pair' }, type: 'text', body: { t: 1 } });
    await eventually('bo has the copy', async () => (await inbox('bo')).some((e) => e.appinfo === 'w-1'));
    expect((await inbox('bo')).filter((e) => e.appinfo === 'w-1')).toHaveLength(1);
  });

  it('a huge-group message is pushed to its members, with nothing written to their inboxes', async () => {
    const members = ['h1', 'h2', 'h3', 'h4'];
    expect((await messaging.createGroup(alice, { name: 'town', id: 'town', members })).tier).toBe('huge');
    const pushed: PushMessage[] = [];
    const unsubscribe = rig.deps.push.subscribe({
      inbox: inboxKey('t', 'h1'),
      onPush: (msg) => {
        if (msg.group === 'town') pushed.push(msg);
      },
    });
    try {
      await messaging.send(alice, { appinfo: 'h-1', to: { group: 'town' }, type: 'text', body: { t: 'all' } });
      await eventually('the group push to h1', () => pushed.some((p) => p.entries.some((e) => e.appinfo === 'h-1')));
      expect((await inbox('h1')).some((e) => e.appinfo === 'h-1')).toBe(false);
    } finally {
      unsubscribe();
    }
  });

  it('a job on the removed `fanout` queue is not run, and stays pending (nothing stored, nothing lost)', async () => {
    const entry = {
      kind: 'msg' as const,
      appinfo: 'old-1',
      conv: { type: 'user' as const, id: 'alice' },
      from: 'alice',
      sendTime: 1,
      type: 'text',
      body: {},
    };
    await rig.deps.queue.enqueue({ queue: 'fanout', id: 'old-job-1', payload: { tenant: 't', entry, recipients: ['zed'] } });
    // A job of the tier queue enqueued after it runs: the workers are live, the old one is not theirs.
    await rig.deps.queue.enqueue({
      queue: FANOUT_QUEUES.small,
      id: 'new-job-1',
      payload: {
        tenant: 't',
        entry: { ...entry, appinfo: 'new-1' },
        recipients: ['zed'],
      },
    });
    await eventually('the tier job ran', async () => (await inbox('zed')).some((e) => e.appinfo === 'new-1'));
    expect((await inbox('zed')).map((e) => e.appinfo)).toEqual(['new-1']);
    expect((await rig.engine.jobs.list({ queue: 'fanout' })).map((j) => j.id)).toEqual(['old-job-1']);
  });
});
