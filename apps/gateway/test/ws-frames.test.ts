import { afterEach, describe, expect, it } from 'vitest';
import { ForbiddenError, MAX_BODY_BYTES, MAX_FRAME_BYTES, RecallExpiredError } from '@seqline/protocol';
import { sampleEntry } from './fake-messaging.ts';
import { startGateway, TRANSPORTS, type Started } from './harness.ts';

const send = { appinfo: '0192-a', to: { user: 'bob' }, type: 'text', body: { text: 'hi' } };
const alice = { tenant: 't1', user: 'alice' };

describe.each(TRANSPORTS)('WebSocket frames (%s)', (transport) => {
  let t: Started;
  afterEach(async () => {
    await t.gateway.close();
  });

  it('dispatches every op with typed args and replies with the documented fields', async () => {
    t = await startGateway(transport);
    const c = await t.connect();
    const wireEntry = { ...sampleEntry };
    const cases: Array<[string, Record<string, unknown>, string, unknown[], Record<string, unknown>]> = [
      ['send', send, 'send', [send], { seq: 7, sendTime: 1_763_700_000_000, duplicate: false }],
      [
        'sync',
        { maxSeq: 3 },
        'sync',
        [3, 200],
        { entries: [wireEntry], headSeq: 42, hasMore: false, groups: [{ id: 'big', headGseq: 9, cursor: 3 }], convs: [] },
      ],
      ['history', { beforeSeq: 50, limit: 10 }, 'history', [50, 10], { entries: [wireEntry], hasMore: true }],
      ['read', { seqs: [40, 41] }, 'read', [[40, 41]], { seq: 43 }],
      ['recall', { appinfo: 'x1' }, 'recall', ['x1'], { seq: 44 }],
      [
        'group.create',
        { name: 'team', members: ['bob'] },
        'createGroup',
        [{ name: 'team', members: ['bob'] }],
        { group: 'g-new', tier: 'small' },
      ],
      [
        'group.create',
        { name: 'team', members: [], group: 'g7' },
        'createGroup',
        [{ name: 'team', members: [], id: 'g7' }],
        { group: 'g7', tier: 'small' },
      ],
      ['group.add', { group: 'g7', members: ['carol'] }, 'addMembers', ['g7', ['carol']], { tier: 'small', memberCount: 3 }],
      ['group.remove', { groupId: 'g7', members: ['carol'] }, 'removeMembers', ['g7', ['carol']], { tier: 'small', memberCount: 1 }],
      ['group.rename', { group: 'g7', name: 'crew' }, 'renameGroup', [{ id: 'g7', name: 'crew' }], { group: 'g7', name: 'crew' }],
      [
        'group.info',
        { group: 'big' },
        'groupInfo',
        ['big'],
        { group: 'big', name: 'team', tier: 'huge', memberCount: 5000, fanout: 'read', headGseq: 12 },
      ],
      [
        'group.history',
        { group: 'big', afterGseq: 3 },
        'groupHistory',
        [{ id: 'big', afterGseq: 3, limit: 200 }],
        { messages: [{ ...sampleEntry, conv: { type: 'group', id: 'big' }, gseq: 12 }], hasMore: false },
      ],
      ['group.ack', { group: 'big', gseq: 12 }, 'groupAck', ['big', 12], { cursor: 12 }],
      // v1.1 conversation ops
      ['conversations', { lastMessages: 2 }, 'conversations', [{ limit: 50, lastMessages: 2 }], { convs: [], headSeq: 42, hasMore: false }],
      [
        'history',
        { conv: { type: 'user', id: 'bob' }, beforeSeq: 50 },
        'conversationHistory',
        [{ type: 'user', id: 'bob' }, 50, 200],
        { entries: [wireEntry], hasMore: false },
      ],
      ['read', { conv: { type: 'group', id: 'g7' }, upToSeq: 40 }, 'readConversation', [{ type: 'group', id: 'g7' }, 40], { seq: 45 }],
      ['delete', { seqs: [3, 1] }, 'deleteForMe', [[3, 1]], { seq: 46 }],
      ['clear', { conv: { type: 'user', id: 'bob' } }, 'clear', [{ type: 'user', id: 'bob' }, undefined], { seq: 47 }],
      ['edit', { appinfo: 'x1', body: { t: 1 } }, 'edit', [{ appinfo: 'x1', body: { t: 1 } }], { seq: 48 }],
    ];
    for (const [op, args, method, expectedArgs, result] of cases) {
      const reply = await c.request(op, args);
      const { id, ...rest } = reply;
      expect(rest, op).toEqual({ ok: true, ...result });
      expect(typeof id).toBe('number');
      const call = t.messaging.calls.at(-1);
      expect(call, op).toEqual({ method, caller: alice, args: expectedArgs });
    }
    await c.close();
  });

  it('each bad input gets its typed error and the connection keeps serving', async () => {
    t = await startGateway(transport);
    const c = await t.connect();
    const bad: Array<[string | Buffer, number | null, string, string]> = [
      ['not json', null, 'BAD_REQUEST', 'not valid JSON'],
      ['[1,2]', null, 'BAD_REQUEST', 'JSON object'],
      ['null', null, 'BAD_REQUEST', 'JSON object'],
      ['{"op":"sync","maxSeq":0}', null, 'BAD_REQUEST', 'id: is required'],
      ['{"id":11,"op":"teleport"}', 11, 'BAD_REQUEST', 'unknown op'],
      ['{"id":12,"op":"sync"}', 12, 'BAD_REQUEST', 'sync: maxSeq: is required'],
      ['{"id":13,"op":"send","appinfo":"a","to":{"user":"x:y"},"type":"t","body":1}', 13, 'BAD_REQUEST', 'send: to.user'],
      ['{"id":14,"op":"group.info","group":7}', 14, 'BAD_REQUEST', 'group.info: group'],
      ['{"id":15,"op":"group.rename","group":"g7"}', 15, 'BAD_REQUEST', 'group.rename: name'],
      ['{"id":16,"op":"group.rename","group":"g7","name":""}', 16, 'BAD_REQUEST', 'group.rename: name'],
      [`{"id":17,"op":"group.rename","group":"g7","name":"${'n'.repeat(129)}"}`, 17, 'BAD_REQUEST', 'group.rename: name'],
      ['{"id":18,"op":"group.rename","name":"crew"}', 18, 'BAD_REQUEST', 'group.rename: group'],
      [Buffer.from([0x7b, 0xff]), null, 'BAD_REQUEST', 'UTF-8'],
    ];
    for (const [raw, id, code, message] of bad) {
      c.sendRaw(raw);
      const reply = await c.nextReply(id);
      expect(reply).toMatchObject({ id, ok: false, error: { code } });
      expect(reply.error?.message).toContain(message);
    }
    expect(await c.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('sync')).toHaveLength(1); // nothing invalid reached Messaging
    await c.close();
  });

  it('TOO_LARGE for bodies over 64 KiB and frames up to the hard cap; beyond it the socket closes', async () => {
    t = await startGateway(transport);
    const c = await t.connect();
    const big = await c.request('send', { ...send, body: 'x'.repeat(MAX_BODY_BYTES) });
    expect(big).toMatchObject({ ok: false, error: { code: 'TOO_LARGE' } });
    c.sendRaw(JSON.stringify({ id: 99, op: 'send', ...send, body: 'y'.repeat(MAX_FRAME_BYTES * 2) }));
    expect(await c.nextReply(99)).toMatchObject({ ok: false, error: { code: 'TOO_LARGE' } });
    expect(await c.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('send')).toHaveLength(0);
    c.sendRaw('z'.repeat(1024 * 1024));
    // ws sends close 1009; uWS drops the TCP connection at once (the client sees 1006).
    expect((await c.closed).code).toBe(transport === 'ws' ? 1009 : 1006);
  });

  it('a client that keeps sending bad frames is closed (1008); good frames reset the count', async () => {
    t = await startGateway(transport, { maxConsecutiveBadFrames: 5 });
    const c = await t.connect();
    for (let i = 0; i < 5; i++) c.sendRaw('bad');
    expect(await c.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true }); // resets
    for (let i = 0; i < 6; i++) c.sendRaw('bad');
    expect(await c.closed).toMatchObject({ code: 1008, reason: 'too many bad frames' });
  });

  it('RATE_LIMITED per user (tenant:user), other users unaffected', async () => {
    t = await startGateway(transport, { rateLimit: { perSecond: 0.001, burst: 3 } });
    const a = await t.connect('alice');
    const b = await t.connect('bob');
    const replies = await Promise.all(Array.from({ length: 5 }, () => a.request('sync', { maxSeq: 0 })));
    expect(replies.map((r) => r.ok)).toEqual([true, true, true, false, false]);
    expect(replies[4]).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    // A second socket of the same user shares the bucket.
    const a2 = await t.connect('alice');
    expect(await a2.request('sync', { maxSeq: 0 })).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(await b.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    const otherTenant = await t.connect('alice', 't2');
    expect(await otherTenant.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('sync')).toHaveLength(5);
  });

  it('Messaging errors keep their code; unknown errors become a bare INTERNAL, logged once', async () => {
    t = await startGateway(transport);
    const c = await t.connect();
    t.messaging.failWith('recall', new RecallExpiredError());
    t.messaging.failWith('groupInfo', new ForbiddenError('not a member of big'));
    t.messaging.failWith('read', new Error('connection to 10.0.0.5:9042 failed, password=hunter2'));
    expect(await c.request('recall', { appinfo: 'a' })).toMatchObject({ ok: false, error: { code: 'RECALL_EXPIRED' } });
    expect(await c.request('group.info', { group: 'big' })).toMatchObject({ error: { code: 'FORBIDDEN', message: 'not a member of big' } });
    const internal = await c.request('read', { seqs: [1] });
    expect(internal).toMatchObject({ ok: false, error: { code: 'INTERNAL', message: 'internal error' } });
    expect(JSON.stringify(internal)).not.toContain('hunter2');
    const errors = t.logger.records.filter((r) => r.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.obj).toMatchObject({ op: 'read', user: 'alice', tenant: 't1' });
    expect(String(errors[0]?.obj['err'])).toContain('hunter2'); // the operator sees the cause
    expect(await c.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
  });

  it('requests reach Messaging in frame order', async () => {
    t = await startGateway(transport, { rateLimit: false });
    const c = await t.connect();
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => c.request('recall', { appinfo: `m${i}` })));
    expect(replies.every((r) => r.ok)).toBe(true);
    expect(t.messaging.callsOf('recall').map((call) => call.args[0])).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));
  });

  it('too many requests in flight on one socket → OVERLOADED, others still answered', async () => {
    t = await startGateway(transport, { maxInFlightPerConnection: 2 });
    const c = await t.connect();
    const release = t.messaging.block('sync');
    const first = c.request('sync', { maxSeq: 0 });
    const second = c.request('sync', { maxSeq: 1 });
    expect(await c.request('sync', { maxSeq: 2 })).toMatchObject({ ok: false, error: { code: 'OVERLOADED' } });
    release();
    expect([(await first).ok, (await second).ok]).toEqual([true, true]);
    expect(await c.request('sync', { maxSeq: 3 })).toMatchObject({ ok: true });
  });

  it('requests waiting for an asynchronous rate limiter count against the in-flight cap', async () => {
    // A shared limiter answers later; the cap must hold for the requests waiting on it too.
    const slowLimiter = { take: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 50)) };
    t = await startGateway(transport, { maxInFlightPerConnection: 2, rateLimiter: slowLimiter });
    const c = await t.connect();
    const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => c.request('sync', { maxSeq: i })));
    expect(replies.filter((r) => r.ok)).toHaveLength(2);
    expect(replies.filter((r) => !r.ok).map((r) => r.error?.code)).toEqual(['OVERLOADED', 'OVERLOADED', 'OVERLOADED']);
    expect(await c.request('sync', { maxSeq: 9 })).toMatchObject({ ok: true });
  });

  it('a reply for a socket that closed meanwhile is dropped quietly', async () => {
    t = await startGateway(transport);
    const c = await t.connect();
    const release = t.messaging.block('sync');
    void c.request('sync', { maxSeq: 0 });
    await eventuallyCalled(t, 'sync');
    await c.close();
    release();
    await new Promise((r) => setTimeout(r, 50));
    expect(t.logger.records.filter((r) => r.level === 'error')).toEqual([]);
    expect(t.gateway.connectionCount()).toBe(0);
  });
});

async function eventuallyCalled(t: Started, method: 'sync'): Promise<void> {
  const deadline = Date.now() + 2000;
  while (t.messaging.callsOf(method).length === 0) {
    if (Date.now() > deadline) throw new Error(`${method} not called`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
