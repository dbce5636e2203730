/** Sync paging rules and the ordering checks used by sync-safety (I2) and fault tests. */
import type { Entry } from './entry.ts';
import { canReadGseq } from './membership.ts';
import type { Membership } from './group-ports.ts';

export const DEFAULT_SYNC_LIMIT = 200;
export const MAX_SYNC_LIMIT = 1000;

/** Page size to use: the default when absent or not a number, else floored into [1, max]. */
export function clampLimit(limit: number | undefined, def = DEFAULT_SYNC_LIMIT, max = MAX_SYNC_LIMIT): number {
  if (limit === undefined || Number.isNaN(limit)) return Math.min(def, max);
  if (limit === Infinity) return max;
  return Math.min(max, Math.max(1, Math.floor(limit)));
}

/** `rows` were fetched with limit + 1: the extra row only tells whether there is more. */
export function pageOf<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return { items: rows.slice(0, limit), hasMore: rows.length > limit };
}

export function isStrictlyIncreasing(seqs: readonly number[]): boolean {
  for (let i = 1; i < seqs.length; i++) {
    if (!((seqs[i] as number) > (seqs[i - 1] as number))) return false;
  }
  return true;
}

/** Seqs stored in the inbox that the client never received (a skip breaks I2); ascending. */
export function findSkips(received: readonly number[], inbox: readonly number[]): number[] {
  const got = new Set(received);
  const missing = new Set<number>();
  for (const s of inbox) if (!got.has(s)) missing.add(s);
  return [...missing].sort((a, b) => a - b);
}

/** Group-stream entries (seq is the gseq) the member may read, in input order. */
export function filterVisibleGroupMessages(entries: Entry[], m: Membership | null): Entry[] {
  return entries.filter((e) => canReadGseq(m, e.seq));
}
