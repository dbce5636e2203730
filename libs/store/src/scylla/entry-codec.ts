/**
 * Entry ⇄ CQL row of `timeline` / `group_stream`. Since schema version 3 a row is the seq, the
 * appinfo and the rest of the entry as one JSON document (readable with cqlsh); rows written
 * before keep their typed columns (only the free-form `body` as JSON text) and are still read.
 * The typed columns of a new row are left unset (not null): no tombstones.
 */
import { BadRequestError, ENTRY_KINDS, hasLoneSurrogate, InternalError, type ConvType, type Entry, type EntryKind, type Json } from '@seqline/core';
import { num, optNum, optStr, str, type Row } from './cql.ts';

/** Seqs per bucket (partition): bucket = floor(seq / 2^16), so a partition holds ≤ 65 536 entries. */
export const BUCKET_SIZE = 65_536;

export function bucketOf(seq: number): number {
  return Math.floor(seq / BUCKET_SIZE);
}

/** Longest appinfo (UTF-8 bytes) accepted, same as the embedded engine. */
export const MAX_APPINFO_BYTES = 512;

/**
 * Columns an append writes after the stream key and bucket, in insert order. The appinfo rides
 * in the document: a row written with its own `appinfo` cell cost Cassandra about 4 µs more per
 * append (measured in session 10, in the git history of docs/benchmarks.md); rows of schema version 3 written before still have
 * that cell, and are read from it.
 */
export const ENTRY_COLUMNS = ['seq', 'doc'] as const;

/** Typed columns of rows written before schema version 3 (no `doc`), still read. */
const LEGACY_COLUMNS = [
  'kind', 'conv_type', 'conv_id', 'sender', 'send_time', 'type', 'body',
  'refer_seq', 'seqs', 'read_by', 'recall_appinfo', 'recall_send_time',
] as const;

export const ENTRY_SELECT = ['seq', 'appinfo', 'doc', ...LEGACY_COLUMNS].join(', ');

/** One value per ENTRY_COLUMNS: one text value for the driver to encode instead of 14 typed ones. */
export function entryParams(entry: Entry): unknown[] {
  return [entry.seq, entryDoc(entry)];
}

/** The `doc` column: the entry without its seq (the clustering key), as JSON. */
export function entryDoc(entry: Entry): string {
  const { seq: _seq, ...rest } = entry;
  return JSON.stringify(rest);
}

/**
 * Rebuilds the entry exactly as appended. A row from before version 3 has one exception: an
 * empty `seqs` or `readBy` list reads back as absent (CQL stores an empty collection as null);
 * the domain never writes empty ones (a read of nothing is refused; a receipt has a reader).
 */
export function rowToEntry(row: Row): Entry {
  const doc = optStr(row.get('doc'));
  return doc === undefined ? legacyRowToEntry(row) : docToEntry(num(row.get('seq')), optStr(row.get('appinfo')), doc);
}

/** The appinfo of an entry row (selected with `seq, appinfo, doc`), without decoding the rest. */
export function rowAppinfo(row: Row): string {
  const column = optStr(row.get('appinfo'));
  if (column !== undefined) return column;
  const doc = optStr(row.get('doc'));
  const appinfo = doc === undefined ? undefined : (JSON.parse(doc) as { appinfo?: unknown }).appinfo;
  if (typeof appinfo !== 'string') throw new InternalError('stored entry has no appinfo');
  return appinfo;
}

/** A version-3 row has its appinfo in a column of its own; a newer one has it in the document. */
function docToEntry(seq: number, appinfoColumn: string | undefined, doc: string): Entry {
  const { appinfo = appinfoColumn, ...rest } = JSON.parse(doc) as Omit<Entry, 'seq' | 'appinfo'> & { appinfo?: string };
  if (typeof appinfo !== 'string') throw new InternalError('stored entry has no appinfo');
  storedKind(rest.kind);
  return { seq, appinfo, ...rest };
}

function storedKind(kind: unknown): EntryKind {
  if (!(ENTRY_KINDS as readonly unknown[]).includes(kind)) throw new InternalError(`stored entry has unknown kind ${String(kind)}`);
  return kind as EntryKind;
}

/** A row written before schema version 3, from its typed columns. */
function legacyRowToEntry(row: Row): Entry {
  const entry: Entry = {
    seq: num(row.get('seq')),
    kind: storedKind(str(row.get('kind'), 'kind')),
    appinfo: str(row.get('appinfo'), 'appinfo'),
    conv: { type: str(row.get('conv_type'), 'conv_type') as ConvType, id: str(row.get('conv_id'), 'conv_id') },
    from: str(row.get('sender'), 'sender'),
    sendTime: num(row.get('send_time')),
  };
  const type = optStr(row.get('type'));
  if (type !== undefined) entry.type = type;
  const body = optStr(row.get('body'));
  if (body !== undefined) entry.body = JSON.parse(body) as Json;
  const referSeq = optNum(row.get('refer_seq'));
  if (referSeq !== undefined) entry.referSeq = referSeq;
  const seqs: unknown = row.get('seqs');
  if (Array.isArray(seqs)) entry.seqs = seqs.map(num);
  const readBy: unknown = row.get('read_by');
  if (Array.isArray(readBy)) entry.readBy = readBy.map((reader) => str(reader, 'read_by'));
  const recallAppinfo = optStr(row.get('recall_appinfo'));
  if (recallAppinfo !== undefined) entry.recall = { appinfo: recallAppinfo, sendTime: num(row.get('recall_send_time')) };
  return entry;
}

/** Rejects what the columns cannot hold faithfully (the embedded engine rejects the same). */
export function checkEntry(stream: string, entry: Entry): void {
  if (!Number.isSafeInteger(entry.seq) || entry.seq < 1) {
    throw new InternalError(`invalid seq ${String(entry.seq)} for ${stream}`);
  }
  if (typeof entry.appinfo !== 'string' || entry.appinfo.length === 0) throw new BadRequestError('entry without appinfo');
  if (hasLoneSurrogate(entry.appinfo)) throw new BadRequestError('appinfo holds an unpaired UTF-16 surrogate');
  if (!appinfoFits(entry.appinfo)) throw new BadRequestError('appinfo too long');
  // Checked field by field, not through an array of pairs: this runs for every entry appended.
  checkInteger('sendTime', entry.sendTime);
  checkInteger('referSeq', entry.referSeq);
  checkInteger('recall.sendTime', entry.recall?.sendTime);
  if (entry.seqs !== undefined) for (const seq of entry.seqs) checkInteger('seqs[]', seq);
}

function checkInteger(field: string, value: number | undefined): void {
  if (value !== undefined && !Number.isSafeInteger(value)) throw new BadRequestError(`${field} must be an integer`);
}

/**
 * Whether an appinfo can be stored (and so looked up). One holding an unpaired surrogate cannot:
 * the driver writes it as UTF-8 with U+FFFD in its place, so "a\uD800" would find "a\uFFFD".
 */
export function appinfoFits(appinfo: string): boolean {
  if (hasLoneSurrogate(appinfo)) return false;
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most appinfos fit without being encoded.
  return appinfo.length * 3 <= MAX_APPINFO_BYTES || Buffer.byteLength(appinfo, 'utf8') <= MAX_APPINFO_BYTES;
}

