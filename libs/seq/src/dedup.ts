/** Cheap dedup before allocating: dedup keys already stored, and repeats within one batch. */
import { dedupKeyOf, type AppendOutcome, type DedupKey, type NewEntry } from '@seqline/core';

export interface FreshEntry {
  /** Position in the batch. */
  index: number;
  entry: NewEntry;
}

/**
 * Splits a batch into entries already stored (outcome filled, duplicate) and first occurrences
 * of new dedup keys (`fresh`, in batch order). Later repeats of a fresh key are left undefined:
 * they get the seq of their first occurrence once it is known. `keys` are the entries' keys
 * (dedupKeyOf), `stored` the seqs of those already stored.
 */
export function dedupAgainst(
  entries: readonly NewEntry[],
  keys: readonly DedupKey[],
  stored: ReadonlyMap<DedupKey, number>,
): { outcomes: (AppendOutcome | undefined)[]; fresh: FreshEntry[] } {
  const outcomes = new Array<AppendOutcome | undefined>(entries.length).fill(undefined);
  const fresh: FreshEntry[] = [];
  // A single entry (the usual append) cannot repeat itself: no set for it.
  const seen = entries.length > 1 ? new Set<DedupKey>() : undefined;
  entries.forEach((entry, index) => {
    const key = keys[index] as DedupKey;
    const seq = stored.get(key);
    if (seq !== undefined) outcomes[index] = { seq, duplicate: true };
    else if (seen === undefined) fresh.push({ index, entry });
    else if (!seen.has(key)) {
      seen.add(key);
      fresh.push({ index, entry });
    }
  });
  return { outcomes, fresh };
}

/**
 * Fills each in-batch repeat with its first occurrence's seq, marked duplicate, with the
 * original: that first entry as stored (or its own original when it was a duplicate too).
 */
export function resolveInBatchDuplicates(outcomes: readonly (AppendOutcome | undefined)[], entries: readonly NewEntry[]): AppendOutcome[] {
  if (!outcomes.includes(undefined)) return outcomes as AppendOutcome[];
  const first = new Map<DedupKey, { outcome: AppendOutcome; entry: NewEntry }>();
  return outcomes.map((o, i) => {
    const entry = entries[i] as NewEntry;
    const key = dedupKeyOf(entry);
    if (o !== undefined) {
      if (!first.has(key)) first.set(key, { outcome: o, entry });
      return o;
    }
    const earlier = first.get(key);
    if (earlier === undefined) throw new Error(`no outcome for dedup key ${key}`);
    const { seq, duplicate } = earlier.outcome;
    const original = duplicate ? earlier.outcome.original : { ...earlier.entry, seq };
    return original === undefined ? { seq, duplicate: true } : { seq, duplicate: true, original };
  });
}
