/**
 * An upgrade (docs/decisions.md, "Server-made ids"): jobs the previous version left pending in
 * the embedded jobs table, under its job ids (`fanout:<tenant>:<appinfo>`, `notify:<tenant>:<group
 * or user>:…`…) and with its payloads, are found by the new workers when they start and each
 * runs once — the payload shapes did not change, the ids are only dedup keys; and the markers it
 * stored in inboxes are still found where they are looked up.
 */
import { inboxKey, NotFoundError, type Entry, type Json, type PushMessage, type TenantHooks } from '@seqline/core';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessaging, startWorkers, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

const SECRET = 'old-job-ids-secret-0123456789';
const T = 'old';
const T0 = 1_763_700_000_000;
let rig: EmbeddedRig;
let receiver: HookReceiver;
let workers: Workers | undefined;
const hooks: Record<string, TenantHooks> = {};

beforeAll(async () => {
  receiver = await startHookReceiver({ secret: SECRET });
  hooks[T] = { secret: SECRET, afterSendUrl: receiver.url, notifyUrl: receiver.url };
  rig = await openEmbeddedRig('old-job-ids', { hooks });
});
afterAll(async () => {
  workers?.stop();
  await rig.close();
  await receiver.close();
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const message: Omit<Entry, 'seq'> = {
  kind: 'msg',
  appinfo: 'local-9',
  conv: { type: 'user', id: 'bob' },
  from: 'amy',
  sendTime: T0,
  type: 'text',
  body: { text: 'sent before the upgrade' },
};

/** What the previous version persisted: its ids, its payloads. */
function previousVersionJobs(amySeq: number): Array<{ id: string; queue: string; payload: Json }> {
  const json = (v: unknown) => v as Json;
  return [
    { id: `fanout:${T}:local-9`, queue: 'fanout.small', payload: json({ tenant: T, entry: message, recipients: ['bob'] }) },
    {
      id: `after-send:${T}:local-9`,
      queue: 'hooks.after-send',
      payload: json({
        tenant: T,
        from: 'amy',
        to: { user: 'bob' },
        appinfo: 'local-9',
        seq: amySeq,
        sendTime: T0,
        msgType: 'text',
        body: message.body,
      }),
    },
    {
      id: `receipt:${T}:amy:local-9:bob`,
      queue: 'receipts',
      payload: json({ tenant: T, sender: 'amy', appinfo: 'local-9', readers: ['bob'] }),
    },
    {
      id: `notify:${T}:og:local-8`,
      queue: 'notify.huge',
      payload: json({
        tenant: T,
        groupKey: `${T}:og`,
        group: 'og',
        entry: { ...message, appinfo: 'local-8', conv: { type: 'group', id: 'og' }, seq: 1 },
        prevGseq: 0,
      }),
    },
    {
      // bob's first entry: the copy the fanout job above makes (the job waits for it if it runs first).
      id: `notify:${T}:bob:1`,
      queue: 'hooks.notify',
      payload: json({
        tenant: T,
        user: 'bob',
        entries: [{ seq: 1, conv: { type: 'user', id: 'amy' }, from: 'amy', appinfo: 'local-9', mention: false }],
      }),
    },
  ];
}

describe('jobs left pending by the previous version', () => {
  it('run once each after the upgrade: a copy, an after-send call, a receipt, a group push, a notification', async () => {
    // The state they act on: amy's own copy (for the receipt) and group `og` with member m.
    const [own] = await rig.owner.append({ inbox: inboxKey(T, 'amy'), entries: [message] });
    await createMessaging(rig.deps).createGroup({ tenant: T, user: 'amy' }, { name: 'og', id: 'og', members: ['m'] });
    const pushes: PushMessage[] = [];
    rig.deps.push.subscribe({ inbox: inboxKey(T, 'm'), onPush: (p) => pushes.push(p) });
    for (const job of previousVersionJobs(own!.seq)) {
      expect(await rig.engine.jobs.put({ ...job, attempts: 0, notBefore: 0, createdAt: Date.now() })).toBe(true);
    }

    workers = await startWorkers(rig.deps);
    await until('every pending job done', async () => (await rig.engine.jobs.list({})).length === 0);
    expect(await rig.queue.deadLetters()).toEqual([]);

    const bobs = await rig.engine.timeline.readAfter({ inbox: inboxKey(T, 'bob'), afterSeq: 0, limit: 100 });
    expect(bobs.filter((e) => e.kind === 'msg' && e.appinfo === 'local-9').map((e) => [e.from, e.conv.id])).toEqual([['amy', 'amy']]);
    const amys = await rig.engine.timeline.readAfter({ inbox: inboxKey(T, 'amy'), afterSeq: 0, limit: 100 });
    expect(amys.filter((e) => e.kind === 'receipt').map((e) => [e.referSeq, e.readBy])).toEqual([[own!.seq, ['bob']]]);
    expect(pushes.filter((p) => p.group === 'og').map((p) => p.entries.map((e) => e.appinfo))).toEqual([['local-8']]);
    const calls = receiver.accepted().map((c) => c.json as { type: string; appinfo?: string; user?: string });
    expect(calls.filter((c) => c.type === 'after_send').map((c) => c.appinfo)).toEqual(['local-9']);
    expect(calls.filter((c) => c.type === 'notify').map((c) => c.user)).toEqual(['bob']);
  });

  it('a recall marker of the previous version (`recall:<appinfo>`) still keeps its message from being edited', async () => {
    const amy = { tenant: T, user: 'amy' };
    const inbox = inboxKey(T, 'amy');
    const now = Date.now(); // inside the edit window
    const recalled = { ...message, appinfo: 'local-5', sendTime: now };
    await rig.owner.append({ inbox, entries: [recalled] });
    await rig.owner.append({
      inbox,
      entries: [
        {
          kind: 'recall',
          appinfo: 'recall:local-5',
          conv: recalled.conv,
          from: 'amy',
          sendTime: now + 1,
          recall: { appinfo: 'local-5', sendTime: now },
        },
      ],
    });
    const messaging = createMessaging(rig.deps);
    await expect(messaging.edit(amy, { appinfo: 'local-5', body: { text: 'changed' } })).rejects.toThrow(NotFoundError);
    // A message without one is edited (the refusal above is the marker's doing).
    await rig.owner.append({ inbox, entries: [{ ...message, appinfo: 'local-6', sendTime: now }] });
    await expect(messaging.edit(amy, { appinfo: 'local-6', body: { text: 'changed' } })).resolves.toMatchObject({
      seq: expect.any(Number),
    });
  });
});
