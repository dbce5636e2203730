/**
 * Entry ⇄ CQL row of `timeline` / `group_stream`. Typed columns (not one JSON blob) so an
 * operator can read an inbox with cqlsh; only the free-form `body` is JSON text. Absent
 * optional fields are bound as `undefined`, which the driver sends as "unset": no tombstones.
 */
import { BadRequestError, ENTRY_KINDS, InternalError, type ConvType, type Entry, type EntryKind, type Json } from '@seqline/core';
import { num, optNum, optStr, str, type Row } from './cql.ts';

/** Seqs per bucket (partition): bucket = floor(seq / 2^16), so a partition holds ≤ 65 536 entries. */
export const BUCKET_SIZE = 65_536;

export function bucketOf(seq: number): number {
  return Math.floor(seq / BUCKET_SIZE);
}

/** Longest appinfo (UTF-8 bytes) accepted, same as the embedded engine. */
export const MAX_APPINFO_BYTES = 512;

/** Columns after the stream key and bucket, in insert order. */
export const ENTRY_COLUMNS = [
  'seq', 'kind', 'appinfo', 'conv_type', 'conv_id', 'sender', 'send_time', 'type', 'body',
  'refer_seq', 'seqs', 'read_by', 'recall_appinfo', 'recall_send_time',
] as const;

export const ENTRY_SELECT = ENTRY_COLUMNS.join(', ');

export function entryParams(entry: Entry): unknown[] {
  return [
    entry.seq, entry.kind, entry.appinfo, entry.conv.type, entry.conv.id, entry.from, entry.sendTime,
    entry.type, entry.body === undefined ? undefined : JSON.stringify(entry.body),
    entry.referSeq, entry.seqs, entry.readBy, entry.recall?.appinfo, entry.recall?.sendTime,
  ];
}

/**
 * Rebuilds the entry exactly as appended, with one exception: an empty `seqs` or `readBy`
 * list reads back as absent (CQL stores an empty collection as null). The domain never
 * writes empty ones (a read of nothing is refused; a receipt has at least one reader).
 */
export function rowToEntry(row: Row): Entry {
  const kind = str(row.get('kind'), 'kind');
  if (!(ENTRY_KINDS as readonly string[]).includes(kind)) throw new InternalError(`stored entry has unknown kind ${kind}`);
  const entry: Entry = {
    seq: num(row.get('seq')),
    kind: kind as EntryKind,
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
  if (!appinfoFits(entry.appinfo)) throw new BadRequestError('appinfo too long');
  const integers: Array<[string, number | undefined]> = [
    ['sendTime', entry.sendTime], ['referSeq', entry.referSeq], ['recall.sendTime', entry.recall?.sendTime],
    ...(entry.seqs ?? []).map((seq): [string, number] => ['seqs[]', seq]),
  ];
  for (const [field, value] of integers) {
    if (value !== undefined && !Number.isSafeInteger(value)) throw new BadRequestError(`${field} must be an integer`);
  }
}

export function appinfoFits(appinfo: string): boolean {
  return Buffer.byteLength(appinfo, 'utf8') <= MAX_APPINFO_BYTES;
}
