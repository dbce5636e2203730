/**
 * Entry ⇄ CQL row of `timeline` / `group_stream`: the seq (clustering key) and the rest of the
 * entry, appinfo included, as one JSON document (`doc`, readable with cqlsh), the tables' only
 * non-key column (schema/001_init.cql).
 */
import { ENTRY_KINDS, InternalError, type Entry } from '@seqline/core';
import { num, optStr, type Row } from './cql.ts';

/** Seqs per bucket (partition): bucket = floor(seq / 2^16), so a partition holds ≤ 65 536 entries. */
export const BUCKET_SIZE = 65_536;

export function bucketOf(seq: number): number {
  return Math.floor(seq / BUCKET_SIZE);
}

/**
 * Columns an append writes after the stream key and bucket, in insert order. The appinfo rides
 * in the document: a row with its own `appinfo` cell cost Cassandra about 4 µs more per append
 * (measured in session 10, in the git history of docs/benchmarks.md).
 */
export const ENTRY_COLUMNS = ['seq', 'doc'] as const;

/** What every entry read selects. */
export const ENTRY_SELECT = ENTRY_COLUMNS.join(', ');

/** One value per ENTRY_COLUMNS: one text value for the driver to encode instead of 14 typed ones. */
export function entryParams(entry: Entry): unknown[] {
  return [entry.seq, entryDoc(entry)];
}

/** The `doc` column: the entry without its seq (the clustering key), as JSON. */
export function entryDoc(entry: Entry): string {
  const { seq: _seq, ...rest } = entry;
  return JSON.stringify(rest);
}

/** Rebuilds the entry exactly as appended, from a row selected with ENTRY_SELECT. */
export function rowToEntry(row: Row): Entry {
  const { appinfo, ...rest } = parseDoc(row);
  if (typeof appinfo !== 'string') throw new InternalError('stored entry has no appinfo');
  if (!(ENTRY_KINDS as readonly unknown[]).includes(rest.kind))
    throw new InternalError(`stored entry has unknown kind ${String(rest.kind)}`);
  return { seq: num(row.get('seq')), appinfo, ...rest };
}

type StoredDoc = Omit<Entry, 'seq' | 'appinfo'> & { appinfo?: unknown };

function parseDoc(row: Row): StoredDoc {
  const doc = optStr(row.get('doc'));
  if (doc === undefined) throw new InternalError(`stored entry ${String(row.get('seq'))} has no doc`);
  return JSON.parse(doc) as StoredDoc;
}
