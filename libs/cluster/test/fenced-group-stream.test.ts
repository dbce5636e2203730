/**
 * The pieces a shard slot writes group streams with, on the embedded LMDB engine (no Redis or
 * NATS): the lease fence in front of the store, and a GroupStreamWriter limited to the slot's
 * shard and claiming with the slot's epoch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedError, groupStreamOf, inboxKey, silentLogger } from '@seqline/core';
import type { Entry, GroupStreamAppend, GroupStreamStoreWriter, WriteGuard } from '@seqline/core';
import { GroupStreamWriter, ShardNotOwnedError } from '@seqline/seq';
import { FencedGroupStreamStoreWriter, ShardLeaseLostError } from '../src/index.ts';
import { groupInShard, groupMsg } from './support/doubles.ts';
import { openTempStore, uniqueId } from './support/services.ts';
import type { TempStore } from './support/services.ts';

const SHARDS = 8;

describe('FencedGroupStreamStoreWriter and a per-shard GroupStreamWriter', () => {
  let store: TempStore;
  beforeAll(async () => {
    store = await openTempStore();
  });
  afterAll(async () => {
    await store.close();
  });

  it('refuses appends while the lease says no, and passes reads and read cursors through', async () => {
    let blocked: string | undefined;
    const streams = store.engine.groupStreams;
    const fenced = groupStreamOf({ reader: streams, writer: new FencedGroupStreamStoreWriter(streams, 2, () => blocked) });
    const group = groupInShard(uniqueId('t'), 2, SHARDS);
    const entry = (seq: number): Entry => ({ ...groupMsg(group), seq });
    expect(await fenced.append({ group, entries: [entry(5)] })).toEqual([{ seq: 5, duplicate: false }]);

    blocked = 'self-fenced';
    await expect(fenced.append({ group, entries: [entry(6)] })).rejects.toBeInstanceOf(ShardLeaseLostError);
    await expect(fenced.append({ group, entries: [entry(6)] })).rejects.toMatchObject({ code: 'OVERLOADED', shard: 2 });
    expect(await fenced.headSeq(group)).toBe(5);
    expect((await fenced.readAfter({ group, afterGseq: 0, limit: 10 })).map((e) => e.seq)).toEqual([5]);
    expect(await fenced.setCursor({ group, inbox: inboxKey('t', 'reader'), gseq: 5 })).toBe(5);
    expect(await fenced.getCursor({ group, inbox: inboxKey('t', 'reader') })).toBe(5);
  });

  it('hands the append input on whole: a field it does not know, and a guard running the caller one and the lease check', async () => {
    const received: GroupStreamAppend[] = [];
    const inner: GroupStreamStoreWriter = {
      append: async (input) => {
        received.push(input);
        input.guard?.();
        return [];
      },
    };
    let blocked: string | undefined;
    let guarded = 0;
    const guard: WriteGuard = Object.assign(() => void guarded++, { term: 'caller-term' });
    const group = groupInShard(uniqueId('t'), 2, SHARDS);
    const input = { group, entries: [{ ...groupMsg(group), seq: 1 }], guard, traceId: 'trace-7' };
    await new FencedGroupStreamStoreWriter(inner, 2, () => blocked, 9).append(input);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ group, entries: input.entries, traceId: 'trace-7' });
    expect(guarded).toBe(1);
    expect(received[0]?.guard?.term).toBe('caller-term/shard-2@9');
    // The lease check runs in the guard it hands on: a write round trip after the lease is lost throws.
    blocked = 'lease lost';
    expect(() => received[0]?.guard?.()).toThrow(ShardLeaseLostError);
  });

  it('a writer for one shard claims only that section up front and refuses groups of other shards', async () => {
    const ceilings = store.engine.ceilings;
    const scope = uniqueId('shard-scope-');
    const previous = await ceilings.nextEpoch(scope);
    const owned = 5;
    const tenant = uniqueId('t');
    const writer = new GroupStreamWriter({
      streams: store.engine.groupStreams,
      ceilings,
      logger: silentLogger,
      epoch: await ceilings.nextEpoch(scope),
      shardCount: SHARDS,
      ownedShards: [owned],
    });
    await writer.start();
    // Claimed with the writer's epoch before any write: the previous epoch is fenced now.
    await expect(ceilings.claim({ section: `group-shard-${owned}`, epoch: previous })).rejects.toBeInstanceOf(FencedError);

    const mine = groupInShard(tenant, owned, SHARDS);
    const other = groupInShard(tenant, 6, SHARDS);
    const [o] = await writer.append({ group: mine, entries: [groupMsg(mine)] });
    expect(o).toMatchObject({ duplicate: false, prevSeq: 0 });
    await expect(writer.append({ group: other, entries: [groupMsg(other)] })).rejects.toBeInstanceOf(ShardNotOwnedError);
    await expect(writer.headSeq(other)).rejects.toBeInstanceOf(ShardNotOwnedError);
    expect(await store.engine.groupStreams.headSeq(other)).toBe(0);
    await writer.close();
  });

  it('a successor claiming the section with a higher epoch fences the previous writer at its next ceiling raise', async () => {
    const ceilings = store.engine.ceilings;
    const scope = uniqueId('shard-scope-');
    const shard = 1;
    const group = groupInShard(uniqueId('t'), shard, SHARDS);
    const make = (epoch: number): GroupStreamWriter =>
      new GroupStreamWriter({
        streams: store.engine.groupStreams,
        ceilings,
        logger: silentLogger,
        epoch,
        shardCount: SHARDS,
        ownedShards: [shard],
        step: 3,
      });
    const old = make(await ceilings.nextEpoch(scope));
    await old.start();
    const first = await old.append({ group, entries: [groupMsg(group)] });
    const successor = make(await ceilings.nextEpoch(scope));
    await successor.start();
    // The old writer still has seqs under its ceiling; past it the raise is refused.
    await expect(old.append({ group, entries: Array.from({ length: 4 }, () => groupMsg(group)) })).rejects.toBeInstanceOf(FencedError);
    const [next] = await successor.append({ group, entries: [groupMsg(group)] });
    expect(next!.seq).toBeGreaterThan(first[0]!.seq);
    expect(next!.prevSeq).toBe(first[0]!.seq);
    await Promise.all([old.close(), successor.close()]);
  });
});
