/**
 * Reads of a CQL seq log (inbox timeline or group stream). Three tables per log:
 *
 *   entries  ((key, bucket), seq) → entry columns       bucket = floor(seq / 65 536)
 *   appinfos ((key), appinfo)     → seq                  dedup index; the row appinfo = '' is the head
 *   buckets  ((key), bucket)                             markers of non-empty buckets
 *
 * The head is the commit point: an append writes its entries first and the head (with the
 * dedup index and bucket markers) after, so every read is clamped to `seq <= head` and never
 * shows an entry whose lower neighbours are not durable yet (DESIGN I2). Entries above the
 * head are leftovers of a failed append; the next append clears them (see CqlSeqLog).
 * The head lives in the dedup partition (appinfo '' is never a valid appinfo) so an append
 * learns the head and its duplicates in ONE read. Reads walk the bucket markers, so the empty
 * buckets a seq jump leaves behind cost nothing.
 */
import type { Entry } from '@seqline/core';
import { chunks, num, optNum, type Cql } from './cql.ts';
import { ENTRY_COLUMNS, ENTRY_SELECT, appinfoFits, bucketOf, rowToEntry } from './entry-codec.ts';
import { MARKER_TTL_SECONDS } from './bucket-marker-memo.ts';

export interface SeqLogTables {
  entries: string;
  appinfos: string;
  buckets: string;
  /** Partition key column of all three tables (`inbox` or `grp`). */
  key: string;
}

/** The dedup-index row holding the head. */
export const HEAD_ROW = '';
/** Markers fetched per page while walking buckets. */
const BUCKET_PAGE = 64;
/** appinfos per IN list. */
const IN_CHUNK = 100;

export class SeqLogReader {
  readonly q: ReturnType<typeof statements>;
  private readonly keyColumn: string;

  constructor(readonly cql: Cql, tables: SeqLogTables) {
    this.q = statements(cql, tables);
    this.keyColumn = tables.key;
  }

  async headSeq(stream: string): Promise<number> {
    const result = await this.cql.read(this.q.head, [stream]);
    return optNum(result.first()?.get('seq')) ?? 0;
  }

  async findSeqs(stream: string, appinfos: string[]): Promise<Map<string, number>> {
    return (await this.lookup(stream, appinfos, false)).found;
  }

  /** The head and the stored seqs of `appinfos`, from the same partition reads. */
  async lookup(stream: string, appinfos: string[], withHead = true): Promise<{ head: number; found: Map<string, number> }> {
    const wanted = [...new Set(appinfos)].filter((appinfo) => appinfo !== HEAD_ROW && appinfoFits(appinfo));
    const lists = chunks(withHead ? [HEAD_ROW, ...wanted] : wanted, IN_CHUNK);
    const results = await Promise.all(lists.map((list) => this.cql.read(this.q.lookup, [stream, list])));
    let head = 0;
    const found = new Map<string, number>();
    for (const row of results.flatMap((result) => result.rows)) {
      const appinfo = String(row.get('appinfo'));
      if (appinfo === HEAD_ROW) head = num(row.get('seq'));
      else found.set(appinfo, num(row.get('seq')));
    }
    return { head, found };
  }

  /**
   * Heads and stored seqs of many streams in one request (IN on the partition key, a
   * cartesian product with the appinfos: callers keep streams × appinfos small and filter
   * each stream's `found` to its own appinfos).
   */
  async lookupMany(streams: string[], appinfos: string[]): Promise<Map<string, { head: number; found: Map<string, number> }>> {
    const names = [HEAD_ROW, ...new Set(appinfos.filter((appinfo) => appinfo !== HEAD_ROW && appinfoFits(appinfo)))];
    const keys = [...new Set(streams)];
    const out = new Map(keys.map((key) => [key, { head: 0, found: new Map<string, number>() }]));
    for (const row of await this.cql.readAll(this.q.lookupMany, [keys, names], { fetchSize: 5000 })) {
      const result = out.get(String(row.get(this.keyColumn)));
      if (result === undefined) continue;
      const appinfo = String(row.get('appinfo'));
      if (appinfo === HEAD_ROW) result.head = num(row.get('seq'));
      else result.found.set(appinfo, num(row.get('seq')));
    }
    return out;
  }

  async getEntry(stream: string, seq: number): Promise<Entry | null> {
    if (!Number.isSafeInteger(seq) || seq < 1) return null;
    const [head, result] = await Promise.all([
      this.headSeq(stream),
      this.cql.read(this.q.getEntry, [stream, bucketOf(seq), seq]),
    ]);
    const row = result.first();
    return row === null || seq > head ? null : rowToEntry(row);
  }

  /** True when `seq` holds a committed entry (at or below the head). */
  async hasEntry(stream: string, seq: number): Promise<boolean> {
    if (!Number.isSafeInteger(seq) || seq < 1) return false;
    const [head, result] = await Promise.all([
      this.headSeq(stream),
      this.cql.read(this.q.hasEntry, [stream, bucketOf(seq), seq]),
    ]);
    return result.rows.length > 0 && seq <= head;
  }

  async readAfter(stream: string, afterSeq: number, limit: number): Promise<Entry[]> {
    if (!(limit > 0)) return [];
    const after = Math.max(0, Math.floor(afterSeq)); // seq > 2.5 ⇔ seq > 2 for integer seqs
    const start = bucketOf(after + 1);
    // The first bucket is read alongside the head and the markers (one round trip for the usual
    // inbox of one bucket), unclamped: rows above the head sort after every committed one, so
    // dropping them afterwards leaves exactly the committed rows the clamped read would return.
    const [head, firstPage, early] = await Promise.all([
      this.headSeq(stream), this.markers(stream, start, 'asc'),
      this.cql.readAll(this.q.entriesAfterUnclamped, [stream, start, after, limit]),
    ]);
    const out: Entry[] = [];
    if (after >= head) return out;
    for (let page = firstPage; ; page = await this.markers(stream, (page.at(-1) ?? 0) + 1, 'asc')) {
      for (const bucket of page) {
        if (bucket > bucketOf(head) || out.length >= limit) return out; // above the head: uncommitted leftovers
        const rows = bucket === start
          ? early.filter((row) => num(row.get('seq')) <= head).slice(0, limit - out.length)
          : await this.cql.readAll(this.q.entriesAfter, [stream, bucket, after, head, limit - out.length]);
        out.push(...rows.map(rowToEntry));
      }
      if (page.length < BUCKET_PAGE) return out;
    }
  }

  async readBefore(stream: string, beforeSeq: number, limit: number): Promise<Entry[]> {
    if (!(limit > 0)) return [];
    const before = Math.min(Math.ceil(beforeSeq), Number.MAX_SAFE_INTEGER); // seq < 2.5 ⇔ seq < 3
    if (before <= 1) return [];
    const [head, firstPage] = await Promise.all([this.headSeq(stream), this.markers(stream, bucketOf(before - 1), 'desc')]);
    const upper = Math.min(before - 1, head);
    const out: Entry[] = [];
    if (upper < 1) return out;
    for (let page = firstPage; ; page = await this.markers(stream, (page.at(-1) ?? 0) - 1, 'desc')) {
      for (const bucket of page) {
        if (out.length >= limit) return out;
        if (bucket > bucketOf(upper)) continue; // above the head: uncommitted leftovers
        const rows = await this.cql.readAll(this.q.entriesBefore, [stream, bucket, upper, limit - out.length]);
        out.push(...rows.map(rowToEntry));
      }
      if (page.length < BUCKET_PAGE || (page.at(-1) ?? 0) <= 0) return out;
    }
  }

  /** One page of bucket markers from `start` (inclusive) in the given direction. */
  async markers(stream: string, start: number, direction: 'asc' | 'desc'): Promise<number[]> {
    if (start < 0) return [];
    const query = direction === 'asc' ? this.q.markersAsc : this.q.markersDesc;
    const result = await this.cql.read(query, [stream, start, BUCKET_PAGE]);
    return result.rows.map((row) => num(row.get('bucket')));
  }

  /** All markers in (above, upTo]: where leftovers of failed appends may lie (rare path). */
  async markersBetween(stream: string, above: number, upTo: number): Promise<number[]> {
    const rows = await this.cql.readAll(this.q.markersBetween, [stream, above, upTo]);
    return rows.map((row) => num(row.get('bucket')));
  }
}

function statements(cql: Cql, tables: SeqLogTables) {
  const entries = cql.table(tables.entries);
  const appinfos = cql.table(tables.appinfos);
  const buckets = cql.table(tables.buckets);
  const k = tables.key;
  return {
    head: `SELECT seq FROM ${appinfos} WHERE ${k} = ? AND appinfo = ''`,
    lookup: `SELECT appinfo, seq FROM ${appinfos} WHERE ${k} = ? AND appinfo IN ?`,
    lookupMany: `SELECT ${k}, appinfo, seq FROM ${appinfos} WHERE ${k} IN ? AND appinfo IN ?`,
    markersAsc: `SELECT bucket FROM ${buckets} WHERE ${k} = ? AND bucket >= ? LIMIT ?`,
    markersDesc: `SELECT bucket FROM ${buckets} WHERE ${k} = ? AND bucket <= ? ORDER BY bucket DESC LIMIT ?`,
    markersBetween: `SELECT bucket FROM ${buckets} WHERE ${k} = ? AND bucket > ? AND bucket <= ?`,
    getEntry: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq = ?`,
    hasEntry: `SELECT seq FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq = ?`,
    entriesAfter: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq > ? AND seq <= ? LIMIT ?`,
    entriesAfterUnclamped: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq > ? LIMIT ?`,
    entriesBefore: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq <= ? ORDER BY seq DESC LIMIT ?`,
    // Writes (used by CqlSeqLog)
    insertEntry: `INSERT INTO ${entries} (${k}, bucket, ${ENTRY_COLUMNS.join(', ')}) VALUES (?, ?, ${ENTRY_COLUMNS.map(() => '?').join(', ')})`,
    probeRange: `SELECT seq FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq > ? AND seq <= ? LIMIT 1`,
    deleteRange: `DELETE FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq > ? AND seq <= ?`,
    insertAppinfo: `INSERT INTO ${appinfos} (${k}, appinfo, seq) VALUES (?, ?, ?)`,
    insertMarker: `INSERT INTO ${buckets} (${k}, bucket) VALUES (?, ?) USING TTL ${MARKER_TTL_SECONDS}`,
    // The head's write timestamp is the head itself: last-write-wins then means highest-head-wins,
    // whatever the writers' clocks say (a takeover by a process with a slower clock cannot move
    // the head back). TTL 0: the head outlives the 180-day TTL of everything else.
    setHead: `INSERT INTO ${appinfos} (${k}, appinfo, seq) VALUES (?, '', ?) USING TTL 0 AND TIMESTAMP ?`,
  };
}
