/**
 * Write timestamps that follow seqs, not clocks (docs/decisions.md, "Write timestamps follow
 * seqs, not clocks").
 *
 * Of two writes to one cell, Cassandra keeps the one with the higher timestamp, whatever order
 * they arrive in. Rows that are overwritten again and again — the conversation index: one
 * record per conversation, rewritten by every message — must therefore carry timestamps that
 * grow with what the rows describe, not with a process's wall clock: a clock that jumps forward
 * on one writer makes its rows outlive every later write of the next owner, one that jumps back
 * makes a writer's rows lose to older ones. Index rows are exact at a seq (the watermark they are
 * written with), and an inbox's seqs only grow, across owners too (a new owner starts above the
 * ceiling it claimed with its epoch, so the epoch is already in the seq): the timestamp is the
 * seq, scaled.
 *
 * Layout (a CQL bigint): BASE + seq · STEPS + step, where step 0 is the incremental write exact at
 * `seq`, steps 1 … STEPS − 2 are rebuilds at `seq` (three each) and step STEPS − 1 moves the
 * index exact at `seq` to a new expiry horizon. BASE (2^52 µs, the year 2112)
 * puts all of them above every wall-clock timestamp, such as rows written before this rule.
 * seq ≤ Number.MAX_SAFE_INTEGER keeps the largest below 2^52 + 2^62 < 2^63.
 */
import { InternalError } from './errors.ts';

export const SEQ_TIMESTAMP_BASE = 1n << 52n;
/** Timestamps per seq: the incremental write, then rebuilds (three timestamps each). */
export const SEQ_TIMESTAMP_STEPS = 512n;
/** The largest timestamp CQL can carry (a signed 64-bit integer). */
export const MAX_CQL_TIMESTAMP = (1n << 63n) - 1n;

/** The timestamp of the write that leaves an index exact at `seq` (its watermark). */
export function seqWriteTimestamp(seq: number): bigint {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new InternalError(`write timestamp of an invalid seq ${String(seq)}`);
  return SEQ_TIMESTAMP_BASE + BigInt(seq) * SEQ_TIMESTAMP_STEPS;
}

/** The seq a timestamp of this layout belongs to; undefined for one below it (a wall-clock timestamp). */
export function seqOfWriteTimestamp(timestamp: bigint): bigint | undefined {
  return timestamp < SEQ_TIMESTAMP_BASE ? undefined : (timestamp - SEQ_TIMESTAMP_BASE) / SEQ_TIMESTAMP_STEPS;
}

/**
 * The timestamp of moving an index exact at `watermark` to a new expiry horizon (core's
 * expireConversations), written before the index writes of the entries above the watermark: the
 * last step of the watermark's slot. It lies above the watermark's incremental write and every
 * rebuild at it (they refuse that step: rebuildWriteTimestamps), and below the write of any
 * later seq. One such write per watermark: a second one at the same watermark would tie with the
 * first (the store checks the horizon's WRITETIME).
 */
export function expiryWriteTimestamp(watermark: number): bigint {
  return seqWriteTimestamp(watermark) + SEQ_TIMESTAMP_STEPS - 1n;
}

/** What a rebuild reads of the stored watermark row before it writes. */
export interface StoredWatermarkStamps {
  /** The stored watermark (0: none). */
  seq: number;
  /** The rebuild sentinel is set: a rebuild was cut off after its first write. */
  rebuilding: boolean;
  /** WRITETIME of the watermark: the last incremental write, or the last finished rebuild's finish. */
  seqWrittenAt?: bigint | undefined;
  /** WRITETIME of the sentinel: a cut-off rebuild's clear, or a finished one's finish. */
  sentinelWrittenAt?: bigint | undefined;
}

/** The three writes of a rebuild: partition deletes with the sentinel, the recount's rows, the watermark with the sentinel's end. */
export interface RebuildTimestamps {
  clear: bigint;
  rows: bigint;
  finish: bigint;
}

/**
 * A rebuild's timestamps at `headSeq`. Its clear lies above everything stored: every
 * incremental write up to the head or the stored watermark (a deposed writer's late one
 * included), and everything an earlier rebuild wrote (the rows of a cut-off one lie one above
 * its sentinel). Its finish lies below the incremental write of any later seq, so the next
 * append's rows are never hidden. InternalError when the seq's steps are used up (about 170
 * rebuilds at one head with no append between).
 */
export function rebuildWriteTimestamps(input: { headSeq: number; stored: StoredWatermarkStamps }): RebuildTimestamps {
  const { headSeq, stored } = input;
  let highest = seqWriteTimestamp(Math.max(headSeq, stored.seq));
  if (stored.seqWrittenAt !== undefined && stored.seqWrittenAt > highest) highest = stored.seqWrittenAt;
  if (stored.sentinelWrittenAt !== undefined) {
    const lastRebuild = stored.sentinelWrittenAt + (stored.rebuilding ? 1n : 0n);
    if (lastRebuild > highest) highest = lastRebuild;
  }
  const clear = highest + 1n;
  const slot = seqOfWriteTimestamp(highest) as bigint;
  const nextSeqAt = SEQ_TIMESTAMP_BASE + (slot + 1n) * SEQ_TIMESTAMP_STEPS;
  // The slot's last step is the expiry's (expiryWriteTimestamp): a rebuild stays below it.
  if (clear + 2n >= nextSeqAt - 1n || clear + 2n > MAX_CQL_TIMESTAMP) {
    throw new InternalError(`conversation index rebuilt too often at seq ${slot}; an append to the inbox makes room`);
  }
  return { clear, rows: clear + 1n, finish: clear + 2n };
}
