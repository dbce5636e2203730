/** Cheap dedup before allocating: appinfos already stored, and repeats within one batch. */
import type { AppendOutcome, NewEntry } from '@seqline/core';

export interface FreshEntry {
  /** Position in the batch. */
  index: number;
  entry: NewEntry;
}

/**
 * Splits a batch into entries already stored (outcome filled, duplicate) and first occurrences
 * of new appinfos (`fresh`, in batch order). Later repeats of a fresh appinfo are left
 * undefined: they get the seq of their first occurrence once it is known.
 */
export function dedupAgainst(
  entries: readonly NewEntry[],
  stored: ReadonlyMap<string, number>,
): { outcomes: (AppendOutcome | undefined)[]; fresh: FreshEntry[] } {
  const outcomes = new Array<AppendOutcome | undefined>(entries.length).fill(undefined);
  const fresh: FreshEntry[] = [];
  // A single entry (the usual append) cannot repeat itself: no set for it.
  const seen = entries.length > 1 ? new Set<string>() : undefined;
  entries.forEach((entry, index) => {
    const seq = stored.get(entry.appinfo);
    if (seq !== undefined) outcomes[index] = { seq, duplicate: true };
    else if (seen === undefined) fresh.push({ index, entry });
    else if (!seen.has(entry.appinfo)) {
      seen.add(entry.appinfo);
      fresh.push({ index, entry });
    }
  });
  return { outcomes, fresh };
}

/** Fills each in-batch repeat with its first occurrence's seq, marked duplicate. */
export function resolveInBatchDuplicates(outcomes: readonly (AppendOutcome | undefined)[], entries: readonly NewEntry[]): AppendOutcome[] {
  if (!outcomes.includes(undefined)) return outcomes as AppendOutcome[];
  const first = new Map<string, AppendOutcome>();
  return outcomes.map((o, i) => {
    const appinfo = (entries[i] as NewEntry).appinfo;
    if (o !== undefined) {
      if (!first.has(appinfo)) first.set(appinfo, o);
      return o;
    }
    const original = first.get(appinfo);
    if (original === undefined) throw new Error(`no outcome for appinfo ${appinfo}`);
    return { seq: original.seq, duplicate: true };
  });
}
