/**
 * What a ShardOwnerHost (shard-owner-host.ts) reads off its shard slots: the shards it serves,
 * its readiness, and where a follow-up append goes.
 */
import { shardOf } from '@seqline/core';
import type { AppendOutcome, InboxAppend, Logger } from '@seqline/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { ShardLeaseLostError } from './errors.ts';
import { RemoteInboxWriter } from './remote-inbox-writer.ts';
import type { ShardSlot } from './shard-slot.ts';
import type { HostReadiness, ShardStatus } from './shard-owner-host-options.ts';

/** Shards whose requests the host answers now, ascending. */
export function servingShards(slots: Iterable<ShardSlot>): number[] {
  return [...slots]
    .filter((s) => s.state === 'serving')
    .map((s) => s.shard)
    .sort((a, b) => a - b);
}

export function shardStates(slots: Iterable<ShardSlot>): ShardStatus[] {
  return [...slots].map((s) => ({ shard: s.shard, state: s.state, epoch: s.epoch })).sort((a, b) => a.shard - b.shard);
}

/**
 * ShardOwnerHost.readiness: `wanted` is what the host was the preferred owner of in its last
 * round (undefined before the first), `running` whether it is neither new nor closing.
 */
export function hostReadiness(
  slots: ReadonlyMap<number, ShardSlot>,
  wanted: ReadonlySet<number> | undefined,
  running: boolean,
): HostReadiness {
  const serving = servingShards(slots.values());
  const mine = new Set(wanted ?? []);
  for (const slot of slots.values()) if (slot.state !== 'stopping' && slot.state !== 'stopped') mine.add(slot.shard);
  const pending = [...mine].filter((s) => !serving.includes(s)).sort((a, b) => a - b);
  const ready = running && wanted !== undefined && pending.length === 0;
  return { ready, serving, pending };
}

/**
 * A follow-up's inbox append: in place when the host holds its shard, else over NATS. A shard
 * the host holds but cannot write now (waiting out, handing over) has no other owner to forward
 * to: the follow-up fails at once and the caller falls back to its durable path instead of
 * waiting for its timeout.
 */
export function appendAnywhere(
  input: InboxAppend,
  slots: ReadonlyMap<number, ShardSlot>,
  shardCount: number,
  forward: RemoteInboxWriter,
): Promise<AppendOutcome[]> {
  const { inbox, entries } = input;
  const shard = shardOf(inbox, shardCount);
  const slot = slots.get(shard);
  if (!slot) return forward.append(input);
  return slot.appendHere(inbox, entries) ?? Promise.reject(new ShardLeaseLostError(shard, `shard is ${slot.state} here`));
}

/** Where the host sends follow-ups for inboxes of shards served elsewhere. */
export function followUpForwarder(nc: NatsConnection, shardCount: number, subjectPrefix: string, logger: Logger): RemoteInboxWriter {
  // Short deadline: a follow-up is raced against its own timeout, and its fallback is a job.
  return new RemoteInboxWriter({
    nc,
    shardCount,
    subjectPrefix,
    logger,
    requestTimeoutMs: 1000,
    deadlineMs: 2000,
  });
}
