/**
 * Job payloads as they come back from a queue (JSON): one zod schema per job kind. Jobs the
 * previous version enqueued (literal JSON, as its producers wrote it) still parse, to exactly
 * what was stored; malformed ones are refused with `malformed <kind> job` (what the worker
 * dead-letters them under, offline-notify.hostile.test.ts); a payload is checked, never rewritten.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ENTRY_KINDS, inboxKey, type Json } from '@seqline/core';
import { createMessaging, startWorkers, type Workers } from '../src/index.ts';
import {
  AFTER_SEND_QUEUE,
  FANOUT_QUEUES,
  JOB_SCHEMAS,
  MalformedJobError,
  NOTIFY_QUEUE,
  OFFLINE_NOTIFY_QUEUE,
  parseJob,
  RECEIPT_QUEUE,
  type JobKind,
} from '../src/queues.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

/** What the previous version's producers enqueued, byte for byte as its queue stored it. */
const PREVIOUS_VERSION: Array<[JobKind, string]> = [
  // send.ts: a 1:1 message
  [
    'fanout',
    '{"tenant":"t1","entry":{"kind":"msg","appinfo":"a-1","conv":{"type":"user","id":"alice"},"from":"alice","sendTime":1763700000000,"type":"text","body":{"text":"hi"}},"recipients":["bob"]}',
  ],
  // send.ts: a group message with mentions (write-fanout tier)
  [
    'fanout',
    '{"tenant":"t1","entry":{"kind":"msg","appinfo":"a-2","conv":{"type":"group","id":"g1"},"from":"alice","sendTime":1763700000001,"type":"text","body":"plain","mentions":["bob","@all"]},"recipients":["bob","carol"],"groupKey":"t1:g1"}',
  ],
  // timeline-ops.ts: a recall to the copy holders
  [
    'fanout',
    '{"tenant":"t1","entry":{"kind":"recall","appinfo":"recall:alice:a-1","conv":{"type":"user","id":"alice"},"from":"alice","sendTime":1763700000500,"recall":{"appinfo":"a-1","sendTime":1763700000000,"from":"alice"}},"recipients":["bob"]}',
  ],
  // groups.ts: a membership event
  [
    'fanout',
    '{"tenant":"t1","groupKey":"t1:g1","entry":{"kind":"group","appinfo":"group:g1:add:3","conv":{"type":"group","id":"g1"},"from":"alice","sendTime":1763700000002,"type":"group.add","body":{"members":["dave"],"count":4}},"recipients":["alice","bob","carol","dave"]}',
  ],
  // a body with a `__proto__` key (a body is stored as sent, docs/security.md)
  [
    'fanout',
    '{"tenant":"t1","entry":{"kind":"msg","appinfo":"a-4","conv":{"type":"user","id":"alice"},"from":"alice","sendTime":1763700000004,"type":"json","body":{"__proto__":{"admin":true},"n":1}},"recipients":["bob"]}',
  ],
  // an edit to the copy holders
  [
    'fanout',
    '{"tenant":"t1","entry":{"kind":"edit","appinfo":"edit:alice:a-1:1763700000900","conv":{"type":"user","id":"alice"},"from":"alice","sendTime":1763700000900,"edit":{"appinfo":"a-1","sendTime":1763700000000,"type":"text","body":{"text":"hi!"},"editedAt":1763700000900}},"recipients":["bob"]}',
  ],
  // send.ts: a read-fanout group message pushed to the members connected
  [
    'notify',
    '{"tenant":"t1","groupKey":"t1:big","group":"big","entry":{"kind":"msg","appinfo":"a-3","conv":{"type":"group","id":"big"},"from":"alice","sendTime":1763700000003,"type":"text","body":{"text":"all"},"seq":41},"prevGseq":40}',
  ],
  // timeline-ops.ts: a receipt
  ['receipt', '{"tenant":"t1","sender":"alice","appinfo":"a-1","readers":["bob"]}'],
  // after-send.ts: a 1:1 and a group message (body null when the message had none)
  [
    'after-send',
    '{"tenant":"t1","from":"alice","to":{"user":"bob"},"appinfo":"a-1","seq":7,"sendTime":1763700000000,"msgType":"text","body":{"text":"hi"}}',
  ],
  [
    'after-send',
    '{"tenant":"t1","from":"alice","to":{"group":"g1"},"appinfo":"a-2","seq":8,"sendTime":1763700000001,"msgType":"","body":null}',
  ],
  // offline-notifier.ts: one window, with and without a preview
  [
    'offline notify',
    '{"tenant":"t1","user":"bob","entries":[{"seq":7,"conv":{"type":"user","id":"alice"},"from":"alice","appinfo":"a-1","mention":false,"preview":"hi"},{"seq":9,"conv":{"type":"group","id":"g1"},"from":"alice","appinfo":"a-2","mention":true}]}',
  ],
];

const MALFORMED: Array<[JobKind, Json]> = [
  ['fanout', null],
  ['fanout', [1, 2]],
  ['fanout', 'fanout'],
  ['fanout', { tenant: 't', recipients: ['b'] }],
  ['fanout', { tenant: 't', entry: {}, recipients: ['b'] }],
  [
    'fanout',
    { tenant: 't', entry: { kind: 'msg', appinfo: 'a', conv: { type: 'user', id: 'x' }, from: 'x', sendTime: 1 }, recipients: 'b' },
  ],
  [
    'fanout',
    { tenant: 't', entry: { kind: 'nope', appinfo: 'a', conv: { type: 'user', id: 'x' }, from: 'x', sendTime: 1 }, recipients: [] },
  ],
  [
    'fanout',
    { tenant: 't', entry: { kind: 'msg', appinfo: 'a', conv: { type: 'room', id: 'x' }, from: 'x', sendTime: 1 }, recipients: [] },
  ],
  [
    'fanout',
    { tenant: 't', entry: { kind: 'msg', appinfo: 'a', conv: { type: 'user', id: 'x' }, from: 'x', sendTime: '1' }, recipients: [] },
  ],
  [
    'fanout',
    { tenant: 't', entry: { kind: 'msg', appinfo: 'a', conv: { type: 'user', id: 'x' }, from: 'x', sendTime: 1 }, recipients: [1] },
  ],
  ['fanout', { tenant: 7, entry: { kind: 'msg', appinfo: 'a', conv: { type: 'user', id: 'x' }, from: 'x', sendTime: 1 }, recipients: [] }],
  [
    'notify',
    {
      tenant: 't',
      groupKey: 't:g',
      group: 'g',
      entry: { kind: 'msg', appinfo: 'a', conv: { type: 'group', id: 'g' }, from: 'x', sendTime: 1 },
      prevGseq: 0,
    },
  ],
  [
    'notify',
    {
      tenant: 't',
      groupKey: 't:g',
      group: 'g',
      entry: { kind: 'msg', appinfo: 'a', conv: { type: 'group', id: 'g' }, from: 'x', sendTime: 1, seq: 2 },
    },
  ],
  [
    'notify',
    {
      tenant: 't',
      group: 'g',
      entry: { kind: 'msg', appinfo: 'a', conv: { type: 'group', id: 'g' }, from: 'x', sendTime: 1, seq: 2 },
      prevGseq: 1,
    },
  ],
  ['receipt', { tenant: 't', sender: 's', appinfo: 'a' }],
  ['receipt', { tenant: 't', sender: 's', appinfo: 'a', readers: 'bob' }],
  ['receipt', { tenant: 't', sender: null, appinfo: 'a', readers: [] }],
  ['after-send', { tenant: 't', from: 'a', to: 'bob', appinfo: 'a', seq: 1, sendTime: 1, msgType: 't', body: null }],
  ['after-send', { tenant: 't', from: 'a', to: {}, appinfo: 'a', seq: 1, sendTime: 1, msgType: 't', body: null }],
  ['after-send', { tenant: 't', from: 'a', to: { user: 'b' }, appinfo: 'a', seq: '1', sendTime: 1, msgType: 't', body: null }],
  ['after-send', { tenant: 't', from: 'a', to: { user: 'b' }, appinfo: 'a', seq: 1, sendTime: 1, body: null }],
  ['offline notify', null],
  ['offline notify', { tenant: 't', user: 'bob' }],
  ['offline notify', { tenant: 't', user: 'bob', entries: [] }],
  [
    'offline notify',
    { tenant: 't', user: 'bob', entries: [{ seq: '1', conv: { type: 'user', id: 'x' }, from: 'x', appinfo: 'a', mention: false }] },
  ],
  [
    'offline notify',
    { tenant: 't', user: 'bob', entries: [{ seq: 0, conv: { type: 'user', id: 'x' }, from: 'x', appinfo: 'a', mention: false }] },
  ],
  [
    'offline notify',
    { tenant: 't', user: 'bob', entries: [{ seq: 1.5, conv: { type: 'user', id: 'x' }, from: 'x', appinfo: 'a', mention: false }] },
  ],
  [
    'offline notify',
    { tenant: 't', user: 'bob', entries: [{ seq: 1, conv: { type: 'room', id: 'x' }, from: 'x', appinfo: 'a', mention: 'yes' }] },
  ],
  [
    'offline notify',
    {
      tenant: 't',
      user: 'bob',
      entries: [{ seq: 1, conv: { type: 'user', id: 'x' }, from: 'x', appinfo: 'a', mention: false, preview: 3 }],
    },
  ],
];

describe('job payloads (zod, one schema per job kind)', () => {
  it.each(PREVIOUS_VERSION)('a %s job of the previous version parses to exactly what was stored', (kind, literal) => {
    const stored = JSON.parse(literal) as Json;
    expect(parseJob(kind, JSON.parse(literal) as Json)).toStrictEqual(stored);
  });

  it('every job kind has a previous-version payload above', () => {
    expect(new Set(PREVIOUS_VERSION.map(([kind]) => kind))).toEqual(new Set(Object.keys(JOB_SCHEMAS)));
  });

  it.each(MALFORMED)('a malformed %s job is refused, named by its kind', (kind, payload) => {
    const parse = () => parseJob(kind, payload);
    expect(parse).toThrow(MalformedJobError);
    expect(parse).toThrow(new RegExp(`^malformed ${kind} job$`));
  });

  it('fields this version does not know pass through, in jobs and in their entries', () => {
    const job = {
      tenant: 't',
      entry: { kind: 'msg', appinfo: 'a', conv: { type: 'user', id: 'x', later: 1 }, from: 'x', sendTime: 1, futureField: { a: [1] } },
      recipients: ['b'],
      traceId: 'abc',
    };
    expect(parseJob('fanout', job)).toStrictEqual(job);
  });

  it('a `__proto__` key in the JSON stays data: no prototype is set, nothing is polluted', () => {
    const literal = '{"tenant":"t","sender":"s","appinfo":"a","readers":["b"],"__proto__":{"polluted":true}}';
    const parsed = parseJob('receipt', JSON.parse(literal) as Json);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect((parsed as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('any JSON value either is handed on as it is or is refused as malformed (property)', () => {
    const kinds = Object.keys(JOB_SCHEMAS) as JobKind[];
    fc.assert(
      fc.property(fc.constantFrom(...kinds), fc.jsonValue(), (kind, value) => {
        const payload = JSON.parse(JSON.stringify(value)) as Json;
        try {
          expect(parseJob(kind, payload)).toBe(payload);
        } catch (err) {
          expect(err).toBeInstanceOf(MalformedJobError);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('every fanout job a producer can write round-trips through JSON (property)', () => {
    const id = fc.string({ minLength: 1, maxLength: 8 });
    const entry = fc.record(
      {
        kind: fc.constantFrom(...ENTRY_KINDS),
        appinfo: id,
        conv: fc.record({ type: fc.constantFrom('user' as const, 'group' as const), id }),
        from: id,
        sendTime: fc.nat(),
        type: id,
        body: fc.jsonValue(),
        referSeq: fc.nat(),
        seqs: fc.array(fc.nat(), { maxLength: 3 }),
        mentions: fc.array(id, { maxLength: 3 }),
        upToSeq: fc.nat(),
      },
      { requiredKeys: ['kind', 'appinfo', 'conv', 'from', 'sendTime'] },
    );
    fc.assert(
      fc.property(id, entry, fc.array(id, { maxLength: 4 }), fc.option(id, { nil: undefined }), (tenant, e, recipients, groupKey) => {
        const stored = JSON.parse(JSON.stringify({ tenant, entry: e, recipients, ...(groupKey ? { groupKey } : {}) })) as Json;
        expect(parseJob('fanout', stored)).toStrictEqual(stored);
      }),
      { numRuns: 300 },
    );
  });
});

describe('malformed jobs on the real queues', () => {
  let rig: EmbeddedRig | undefined;
  let workers: Workers | undefined;
  afterAll(async () => {
    workers?.stop();
    await rig?.close();
  });

  it('each is dead-lettered under its kind; the workers keep running', async () => {
    // Retried for 50 ms, then dead-lettered: the schema refuses the job on every attempt.
    rig = await openEmbeddedRig('malformed-jobs', { backoff: { initialMs: 10, maxMs: 20, giveUpAfterMs: 50 } });
    const queueOf: Record<JobKind, string> = {
      fanout: FANOUT_QUEUES.small,
      notify: NOTIFY_QUEUE,
      receipt: RECEIPT_QUEUE,
      'after-send': AFTER_SEND_QUEUE,
      'offline notify': OFFLINE_NOTIFY_QUEUE,
    };
    const bad = MALFORMED.map(([kind, payload], i) => ({ id: `bad:${i}`, kind, payload }));
    for (const job of bad) await rig.queue.enqueue({ queue: queueOf[job.kind], id: job.id, payload: job.payload });
    workers = await startWorkers(rig.deps);
    const deadline = Date.now() + 20_000;
    let dead = await rig.queue.deadLetters();
    while (dead.length < bad.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      dead = await rig.queue.deadLetters();
    }
    const lastErrors = new Map(dead.map((j) => [j.id, j.lastError]));
    expect(bad.map((j) => lastErrors.get(j.id))).toEqual(bad.map((j) => `malformed ${j.kind} job`));
    // A genuine send afterwards is copied to its recipient by the same workers.
    await createMessaging(rig.deps).send(
      { tenant: 'mj', user: 'amy' },
      { appinfo: 'after-bad', to: { user: 'bob' }, type: 'text', body: {} },
    );
    let copies = 0;
    while (copies === 0 && Date.now() < deadline) {
      copies = (await rig.engine.timeline.readAfter({ inbox: inboxKey('mj', 'bob'), afterSeq: 0, limit: 10 })).filter(
        (e) => e.appinfo === 'after-bad',
      ).length;
      if (copies === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(copies).toBe(1);
  });
});
