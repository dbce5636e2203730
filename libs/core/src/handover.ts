/**
 * How long a new shard owner waits before its first write (docs/architecture.md, "Single-writer
 * inboxes"; libs/cluster/README.md, "Leases, epochs and fencing"). The full wait-out (lease ttl
 * + margin) covers a previous holder that may still believe it holds the lease. It is skipped
 * only when nothing can still write:
 *
 * - the scope never had an epoch: nobody ever wrote under it;
 * - the epoch just before ours was released cleanly — its holder stopped writing, every write of
 *   it settled, and it had itself waited out (or skipped by this same rule) everything before it,
 *   so the record vouches for every earlier epoch too. The record counts only for the epoch right
 *   before ours: one of an older epoch says nothing about the holders after it.
 *
 * After a clean release the new owner still waits until its wall clock has passed the release
 * time: its write timestamps then lie above every timestamp the previous holder took, so a write
 * of the previous holder that lands late (its outcome was unknown) is shadowed by the new owner's
 * gap delete whatever the two clocks' skew (schema/README.md, "Gaps"). Never longer than the
 * full wait-out.
 */
import type { DrawnEpoch } from './ports.ts';

export type HandoverReason = 'never-owned' | 'released' | 'not-released';

export interface HandoverWait {
  /** How long to wait before the first write, in ms (0 ≤ waitMs ≤ waitOutMs). */
  waitMs: number;
  reason: HandoverReason;
}

export interface HandoverInput {
  /** The epoch this owner drew and the record it replaced (SeqCeilingStore.drawEpoch). */
  drawn: DrawnEpoch;
  /** The full wait-out: lease ttl + margin. */
  waitOutMs: number;
  /** This owner's wall clock (ms since 1970) when it decides. */
  wallNowMs: number;
}

export function handoverWait(input: HandoverInput): HandoverWait {
  const { drawn, waitOutMs, wallNowMs } = input;
  if (!Number.isFinite(waitOutMs) || waitOutMs < 0) throw new RangeError(`bad wait-out ${waitOutMs}`);
  const full: HandoverWait = { waitMs: waitOutMs, reason: 'not-released' };
  const before = drawn.before;
  // No record at all is trusted only for the very first epoch: anything else is an inconsistent store.
  if (before === undefined) return drawn.epoch === 1 ? { waitMs: 0, reason: 'never-owned' } : full;
  const released = before.released;
  if (released === undefined || released.epoch !== before.epoch || before.epoch !== drawn.epoch - 1) return full;
  if (!Number.isFinite(released.atMs) || !Number.isFinite(wallNowMs)) return full;
  // Until this clock reads strictly more than the release time (ms resolution).
  const behindMs = released.atMs + 1 - wallNowMs;
  return { waitMs: Math.min(waitOutMs, Math.max(0, behindMs)), reason: 'released' };
}
