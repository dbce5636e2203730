/**
 * A write that outlives its lease (the owner paused while the write was in flight: campaign round
 * `e400ef31`) is reported failed, never acknowledged nor pushed: the successor waited the lease
 * out and range-deletes such a late write, so a push naming it would name an entry that does not
 * stay. On the embedded LMDB engine; the pause is the lease lapsing between the store's write and
 * its answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupStreamOf, inboxKey, timelineOf } from '@seqline/core';
import type { GroupStreamStoreWriter, TimelineAppend, TimelineWriter } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { FencedGroupStreamStoreWriter, FencedTimelineWriter, ShardLeaseLostError } from '../src/index.ts';
import { MemoryLogger, RecordingPushBus, groupInShard, groupMsg, msg } from './support/doubles.ts';
import { openTempStore, uniqueId } from './support/services.ts';
import type { TempStore } from './support/services.ts';

describe('a write whose lease lapsed while it was in flight', () => {
  let store: TempStore;
  beforeAll(async () => {
    store = await openTempStore();
  });
  afterAll(async () => {
    await store.close();
  });

  /**
   * The store's own writer, telling `durable` once the write landed (as the CQL store does), and
   * with `lapse` the lease lapsing between the write and its answer.
   */
  function tellingDurable(lease: { lost?: string }, lapse: boolean): TimelineWriter {
    const inner = store.engine.timeline;
    return {
      append: async (input: TimelineAppend) => {
        const { durable, ...rest } = input;
        const outcomes = await inner.append(rest);
        if (lapse) lease.lost = 'lease expired while paused';
        durable?.(outcomes);
        return outcomes;
      },
      addReaders: (input) => inner.addReaders(input),
    };
  }

  it('is refused to the owner, which neither pushes nor tells `durable` of it, though the entry landed', async () => {
    const lease: { lost?: string } = {};
    const push = new RecordingPushBus();
    const fence = new FencedTimelineWriter(tellingDurable(lease, true), 4, () => lease.lost, 3);
    const owner = new InboxOwner({
      timeline: timelineOf({ reader: store.engine.timeline, writer: fence }),
      ceilings: store.engine.ceilings,
      push,
      logger: new MemoryLogger(),
      epoch: await store.engine.ceilings.nextEpoch(uniqueId('late-answer')),
    });
    const inbox = inboxKey(uniqueId('t'), 'u2');
    const durableTold: unknown[] = [];
    try {
      const appended = owner.append({ inbox, entries: [msg()], durable: (outcomes) => durableTold.push(outcomes) });
      await expect(appended).rejects.toBeInstanceOf(ShardLeaseLostError);
      await expect(appended).rejects.toThrow(/while the write was in flight/);
      expect(durableTold).toEqual([]);
      expect(push.published).toEqual([]);
      // The late write is in the store (the successor's first append deletes it): only its telling was refused.
      expect(await store.engine.timeline.headSeq(inbox)).toBeGreaterThan(0);
      // Deposed for good: the next append is refused before it leaves, and still nothing is pushed.
      await expect(owner.append({ inbox, entries: [msg()] })).rejects.toBeInstanceOf(ShardLeaseLostError);
      expect(push.published).toEqual([]);
    } finally {
      await owner.close();
    }
  });

  it('tells `durable` and answers as before while the lease holds', async () => {
    const fence = new FencedTimelineWriter(tellingDurable({}, false), 4, () => undefined, 3);
    const inbox = inboxKey(uniqueId('t'), 'u3');
    const told: number[] = [];
    const outcomes = await fence.append({ inbox, entries: [{ ...msg(), seq: 9 }], durable: (o) => told.push(...o.map((x) => x.seq)) });
    expect(outcomes).toEqual([{ seq: 9, duplicate: false }]);
    expect(told).toEqual([9]);
  });

  it('is refused for a group stream append too', async () => {
    const lease: { lost?: string } = {};
    const streams = store.engine.groupStreams;
    const lapsing: GroupStreamStoreWriter = {
      append: async (input) => {
        const outcomes = await streams.append(input);
        lease.lost = 'lease expired while paused';
        return outcomes;
      },
    };
    const group = groupInShard(uniqueId('t'), 2, 8);
    const fenced = groupStreamOf({ reader: streams, writer: new FencedGroupStreamStoreWriter(lapsing, 2, () => lease.lost, 5) });
    await expect(fenced.append({ group, entries: [{ ...groupMsg(group), seq: 4 }] })).rejects.toBeInstanceOf(ShardLeaseLostError);
    expect(await fenced.headSeq(group)).toBe(4);
  });
});
