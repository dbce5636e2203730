/**
 * The `rebuild` op of `inbox.append.<shard>` (InboxWriter.rebuildConversations over NATS) under
 * attack: malformed, smuggling and mis-routed (forged) requests are refused with a typed, final
 * error and never reach the rebuilder; a forged reply is refused by the caller; a deposed owner
 * refuses to rebuild. And the honest path: the shard owner runs the rebuild and its pushes carry
 * `convs`. Real Redis and NATS; the LMDB engine as the store.
 */
import { describe, expect, it } from 'vitest';
import { BadRequestError, shardOf, type ConversationRebuildReport, type InboxKey, type WriteGuard } from '@seqline/core';
import { ShardLeaseLostError, decodeReply, decodeRequest } from '../src/index.ts';
import { sharedWriterMemory, shardWriters } from '../src/shard-writers.ts';
import type { ShardLease } from '../src/shard-leases.ts';
import { useRigPerTest } from './support/cluster.ts';
import { MemoryLogger, RecordingPushBus, inboxInShard, msg, waitFor } from './support/doubles.ts';
import { probeServices, useSuiteServices } from './support/services.ts';

const services = await probeServices();
const SHARDS = 4;
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const dec = new TextDecoder();

describe('rebuild request and reply codec', () => {
  it('accepts {op: "rebuild", inbox} only', () => {
    expect(decodeRequest(enc({ op: 'rebuild', inbox: 't:u' }))).toEqual({ op: 'rebuild', inbox: 't:u' });
  });

  it.each([
    ['not JSON', '{"op":"rebuild"'],
    ['an array', [{ op: 'rebuild', inbox: 't:u' }]],
    ['no inbox', { op: 'rebuild' }],
    ['an inbox that is not a scoped key', { op: 'rebuild', inbox: 'u' }],
    ['an inbox that is not a string', { op: 'rebuild', inbox: ['t:u'] }],
    ['entries smuggled along', { op: 'rebuild', inbox: 't:u', entries: [msg()] }],
    ['a follow-up smuggled along', { op: 'rebuild', inbox: 't:u', then: { inbox: 't:v', entries: [], timeoutMs: 10 } }],
  ])('refuses %s with BadRequestError', (_name, body) => {
    expect(() => decodeRequest(enc(body))).toThrow(BadRequestError);
  });

  const report: ConversationRebuildReport = {
    differed: true,
    changedConversations: ['user:bob'],
    conversations: 2,
    entries: 9,
    headSeq: 9,
  };
  it('a reply carries the report, only its documented fields', () => {
    expect(decodeReply(enc({ ok: true, rebuild: { ...report, secret: 'x' } }))).toEqual({ ok: true, rebuild: report });
  });

  it.each([
    ['differed not a boolean', { ...report, differed: 'yes' }],
    ['a changed conversation not a string', { ...report, changedConversations: [7] }],
    ['a negative count', { ...report, conversations: -1 }],
    ['a fractional head', { ...report, headSeq: 1.5 }],
    ['missing entries', { differed: false, changedConversations: [], conversations: 0, headSeq: 0 }],
    ['not an object', 'fine'],
  ])('the caller refuses a forged reply: %s', (_name, rebuild) => {
    expect(() => decodeReply(enc({ ok: true, rebuild }))).toThrow(/bad rebuild report/);
  });
});

describe.skipIf(!services.ok)('rebuild over NATS', () => {
  const svc = useSuiteServices();
  const fresh = useRigPerTest(svc, { shardCount: SHARDS, ttl: 1000 });
  const calls: InboxKey[] = [];
  /** The engine's rebuilder, counting the calls that reach it. */
  const rebuilder = {
    rebuildConversations: ({ inbox }: { inbox: InboxKey; guard?: WriteGuard }) => {
      calls.push(inbox);
      return svc.store.engine.conversationRebuilder.rebuildConversations(inbox);
    },
  };
  const startHost = async () => {
    const rig = fresh();
    const host = rig.host('rebuild-host', { conversations: svc.store.engine.conversations, conversationRebuilder: rebuilder });
    await host.start();
    await waitFor('all shards served', () => host.servingShards().length === SHARDS, 20_000);
    return { rig, host };
  };
  const tenant = `t${Date.now().toString(36)}`;

  it('the owner rebuilds in the inbox queue and answers the report; its pushes carry convs', async () => {
    const { rig, host } = await startHost();
    const writer = rig.writer();
    const inbox = inboxInShard(tenant, 1, SHARDS);
    const [first] = await writer.append({ inbox, entries: [msg(), msg()] });
    const push = await waitFor('the push', () => host.push.published.find((p) => p.inbox === inbox));
    expect(push.convs).toEqual([expect.objectContaining({ conv: { type: 'user', id: 'bob' }, lastSeq: first!.seq + 1, unread: 2 })]);
    calls.length = 0;
    const report = await writer.rebuildConversations(inbox);
    expect(report).toEqual({ differed: false, changedConversations: [], conversations: 1, entries: 2, headSeq: first!.seq + 1 });
    expect(calls).toEqual([inbox]);
  });

  it('malformed, smuggling and mis-routed requests get a final typed error and never reach the rebuilder', async () => {
    const { rig } = await startHost();
    const inbox = inboxInShard(tenant, 2, SHARDS);
    const elsewhere = inboxInShard(tenant, 3, SHARDS);
    const subject = `${rig.subjectPrefix}.${shardOf(inbox, SHARDS)}`;
    calls.length = 0;
    const attacks: Array<[unknown, string]> = [
      ['{"op":"rebuild",', 'BAD_REQUEST'],
      [{ op: 'rebuild' }, 'BAD_REQUEST'],
      [{ op: 'rebuild', inbox: 'no-tenant' }, 'BAD_REQUEST'],
      [{ op: 'rebuild', inbox, entries: [msg()] }, 'BAD_REQUEST'],
      // Forged routing: an inbox of another shard sent to this shard's owner.
      [{ op: 'rebuild', inbox: elsewhere }, 'INTERNAL'],
    ];
    for (const [body, code] of attacks) {
      const reply = await svc.nc.request(subject, enc(body), { timeout: 2000 });
      const parsed = JSON.parse(dec.decode(reply.data)) as { ok: boolean; error?: { code: string; retryable: boolean } };
      expect(parsed, JSON.stringify(body)).toMatchObject({ ok: false, error: { code, retryable: false } });
    }
    expect(calls).toEqual([]);
  });

  it('a deposed owner refuses to rebuild: the lease is checked first, the rebuilder never called', async () => {
    calls.length = 0;
    const lease: ShardLease = {
      shard: 0,
      token: 'x|1',
      epoch: 7,
      runId: 'r',
      writableAt: 0,
      handover: 'not-released',
      renewStartedAt: 0,
      lostReason: 'lost',
    };
    const { owner } = shardWriters(lease, {
      ...sharedWriterMemory(undefined),
      timeline: svc.store.engine.timeline,
      ceilings: svc.store.engine.ceilings,
      push: new RecordingPushBus(),
      logger: new MemoryLogger(),
      shardCount: SHARDS,
      conversationRebuilder: rebuilder,
      writeBlocker: () => 'lease lost to another owner',
    });
    await expect(owner.rebuildConversations(inboxInShard(tenant, 0, SHARDS))).rejects.toBeInstanceOf(ShardLeaseLostError);
    expect(calls).toEqual([]);
    await owner.close();
  });
});
