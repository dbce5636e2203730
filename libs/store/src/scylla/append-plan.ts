/**
 * Pure planning of seq-log appends (no I/O): what one stream's append writes given its head and
 * the duplicates found, and how the statements of many appends are packed into few CQL batches.
 * Packing is what makes the CQL append cheap: Cassandra spends most of a small write on the
 * request itself, so sixty appends in one multi-partition batch cost far less than sixty requests.
 */
import { dedupKeyOf, InternalError, type DedupKey, type Entry, type StoredOutcome } from '@seqline/core';
import type { Statement } from './cql.ts';
import { bigintValue, textValue } from './cql-values.ts';
import { bucketOf, entryDoc } from './entry-codec.ts';
import type { KeyLookup } from './seq-log-reader.ts';

/** Single-partition batches stay well below Cassandra's mutation and frame size limits. */
export const MAX_PARTITION_BATCH_ROWS = 100;
export const MAX_PARTITION_BATCH_BYTES = 512 * 1024;
/**
 * Multi-partition batches stay below Cassandra's `batch_size_fail_threshold` (50 KiB by
 * default; single-partition batches are exempt from it).
 */
export const MAX_SHARED_BATCH_ROWS = 100;
export const MAX_SHARED_BATCH_BYTES = 40 * 1024;

export interface AppendPlan {
  /** One per entry of the call, in order. */
  outcomes: StoredOutcome[];
  /** Entries not stored yet, ascending seqs. Empty when everything was a duplicate. */
  toWrite: Entry[];
  /** Head before this append. */
  stored: number;
  /** Head after this append commits. */
  head: number;
  /** Buckets the new entries fall in. */
  buckets: number[];
  /** True when the new seqs continue the head without a gap (no failed write can be in the way). */
  contiguous: boolean;
  /** Buckets past the one right after the head: their markers go first (a failed write there stays findable). */
  farBuckets: number[];
  /**
   * Previous-layout dedup rows a new entry's row would overwrite (KeyLookup.displaced), to write
   * under their own keys before the entries.
   */
  rekeys: Array<{ bucket: number; key: DedupKey; seq: number }>;
}

/**
 * Dedups `batch` by core's dedup keys against the stored ones (`known`) and within itself, and
 * checks every new seq is above the head. Every check happens before any write: a rejected call
 * writes nothing. A duplicate's outcome carries its original: the stored entry, or the one
 * earlier in the batch.
 */
export function planAppend(stream: string, batch: readonly Entry[], stored: number, known: KeyLookup): AppendPlan {
  let head = stored;
  const outcomes: StoredOutcome[] = [];
  const toWrite: Entry[] = [];
  const rekeys: AppendPlan['rekeys'] = [];
  // A single entry (the usual append) cannot repeat itself: no map for it.
  const written = batch.length > 1 ? new Map<DedupKey, Entry>() : undefined;
  for (const entry of batch) {
    const key = dedupKeyOf(entry);
    const original = known.found.get(key) ?? written?.get(key);
    if (original !== undefined) {
      outcomes.push({ seq: original.seq, duplicate: true, original });
      continue;
    }
    if (entry.seq <= head) throw new InternalError(`seq ${entry.seq} is not above head ${head} of ${stream}`);
    head = entry.seq;
    written?.set(key, entry);
    outcomes.push({ seq: entry.seq, duplicate: false });
    toWrite.push(entry);
    const displaced = known.displaced.get(key);
    if (displaced !== undefined && displaced.bucket === bucketOf(entry.seq)) rekeys.push(displaced);
  }
  const first = toWrite[0]?.seq;
  const buckets: number[] = [];
  // Ascending seqs: a bucket differs from the previous one or repeats it.
  for (const entry of toWrite) if (buckets.at(-1) !== bucketOf(entry.seq)) buckets.push(bucketOf(entry.seq));
  const probed = bucketOf(stored + 1);
  return {
    outcomes,
    toWrite,
    stored,
    head,
    buckets,
    contiguous: first === undefined || (first === stored + 1 && head - first + 1 === toWrite.length),
    farBuckets: buckets.filter((bucket) => bucket > probed),
    rekeys,
  };
}

/** One partition's statements (applied as one mutation) and their statementBytes. */
export interface StatementGroup {
  statements: Statement[];
  bytes: number;
}

/** Rough serialized size of a statement's values (strings as UTF-8 upper bound). */
export function statementBytes(statement: Statement): number {
  return statement.params.reduce<number>((sum, p) => sum + valueBytes(p), 0);
}

function valueBytes(p: unknown): number {
  if (typeof p === 'string') return p.length * 3;
  if (p instanceof Uint8Array) return p.length + 4;
  return Array.isArray(p) ? 16 * p.length + 16 : 16;
}

/**
 * The writes of one stream's new entries: per bucket, each entry's row and its dedup row (keyed
 * by core's dedupKeyOf) —
 * one partition key over two tables, so Cassandra applies a group as one mutation. A bucket
 * with more than fits one batch gets several groups, in seq order. The values the two rows
 * share are encoded once (cql-values.ts).
 */
export function entryGroups(
  stream: string,
  entries: readonly Entry[],
  q: { insertEntry: string; insertAppinfo: string },
): StatementGroup[] {
  const streamValue = textValue(stream);
  const out: StatementGroup[] = [];
  let current: StatementGroup | undefined;
  let currentBucket = -1;
  let bucketValue = streamValue; // replaced before first use
  for (const entry of entries) {
    // Entries come in ascending seqs: a bucket, once left, never comes back.
    const bucket = bucketOf(entry.seq);
    if (bucket !== currentBucket) {
      currentBucket = bucket;
      bucketValue = bigintValue(bucket);
      current = undefined;
    }
    const seqValue = bigintValue(entry.seq);
    const appinfoValue = textValue(dedupKeyOf(entry));
    const docValue = textValue(entryDoc(entry));
    // As statementBytes counts them: the stream, bucket and seq twice, the appinfo and doc once.
    const bytes = 2 * (streamValue.length + 4) + 48 + appinfoValue.length + 4 + docValue.length + 4;
    if (
      current === undefined ||
      current.statements.length + 2 > MAX_PARTITION_BATCH_ROWS ||
      current.bytes + bytes > MAX_PARTITION_BATCH_BYTES
    ) {
      current = { statements: [], bytes: 0 };
      out.push(current);
    }
    current.statements.push(
      { query: q.insertEntry, params: [streamValue, bucketValue, seqValue, docValue] },
      { query: q.insertAppinfo, params: [streamValue, bucketValue, appinfoValue, seqValue] },
    );
    current.bytes += bytes;
  }
  return out;
}

/**
 * Packs per-partition statement groups into batches: small groups share a multi-partition
 * batch (within the shared limits); a group too big to share goes alone (single-partition
 * batches are exempt from the size threshold). A group is never split, so every partition's
 * statements stay in one batch and are applied as one mutation. Returns, per batch, the
 * owners (caller's tags) of the groups in it.
 */
export function packBatches<T>(
  groups: readonly { owner: T; statements: Statement[]; bytes?: number }[],
): { statements: Statement[]; owners: T[] }[] {
  const out: { statements: Statement[]; owners: T[] }[] = [];
  let shared: { statements: Statement[]; owners: T[]; bytes: number } | undefined;
  for (const group of groups) {
    if (group.statements.length === 0) continue;
    const bytes = group.bytes ?? group.statements.reduce((sum, s) => sum + statementBytes(s), 0);
    if (group.statements.length > MAX_SHARED_BATCH_ROWS || bytes > MAX_SHARED_BATCH_BYTES) {
      out.push({ statements: group.statements, owners: [group.owner] });
      continue;
    }
    if (
      shared === undefined ||
      shared.statements.length + group.statements.length > MAX_SHARED_BATCH_ROWS ||
      shared.bytes + bytes > MAX_SHARED_BATCH_BYTES
    ) {
      shared = { statements: [], owners: [], bytes: 0 };
      out.push(shared);
    }
    shared.statements.push(...group.statements);
    if (!shared.owners.includes(group.owner)) shared.owners.push(group.owner);
    shared.bytes += bytes;
  }
  return out.map(({ statements, owners }) => ({ statements, owners }));
}
