/**
 * Reads of a CQL seq log (inbox timeline or group stream). Three tables per log:
 *
 *   entries  ((key, bucket), seq)     → entry columns      bucket = floor(seq / 65 536)
 *   appinfos ((key, bucket), appinfo) → seq                dedup index, same partition key
 *   buckets  ((key), bucket)                               markers of non-empty buckets
 *
 * An append writes each entry with its dedup row as one mutation (same partition key over two
 * tables), so there is no separate commit and no head row: the head is the highest entry of
 * the last non-empty bucket. Reads walk the bucket markers, so the empty buckets a seq jump
 * leaves behind cost nothing, and entries of a bucket whose marker is missing (an append that
 * failed halfway) stay invisible until the next append clears them (see CqlSeqLog).
 * A dedup row can outlive its entry (a late write cleared by that next append), so every seq
 * found through the index is checked against the entry before it is believed.
 */
import { LruMap, isStorableAppinfo, type Entry } from '@seqline/core';
import { chunks, num, type Cql } from './cql.ts';
import { ENTRY_COLUMNS, ENTRY_SELECT, bucketOf, rowAppinfo, rowToEntry } from './entry-codec.ts';
import { MARKER_TTL_SECONDS } from './bucket-marker-memo.ts';

export interface SeqLogTables {
  entries: string;
  appinfos: string;
  buckets: string;
  /** Partition key column of all three tables (`inbox` or `grp`). */
  key: string;
}

/** A non-empty bucket and its highest seq. */
export interface FilledBucket {
  bucket: number;
  top: number;
}

/** Markers fetched per page while walking buckets. */
const BUCKET_PAGE = 64;
/** appinfos per IN list. */
const IN_CHUNK = 100;
/** Buckets per IN list of a dedup lookup. */
const BUCKET_CHUNK = 16;

export class SeqLogReader {
  readonly q: ReturnType<typeof statements>;
  /** Last non-empty bucket seen per stream: buckets only ever get added, so a stale guess is caught. */
  private readonly lastBuckets = new LruMap<string, number>(100_000);

  constructor(
    readonly cql: Cql,
    tables: SeqLogTables,
  ) {
    this.q = statements(cql, tables);
  }

  /**
   * One round trip when this process has seen the stream's last bucket before: the markers and
   * that bucket's top seq are read together, and the guess is kept only if no bucket came after.
   */
  async headSeq(stream: string): Promise<number> {
    const guess = this.lastBuckets.get(stream);
    if (guess !== undefined) {
      const [page, row] = await Promise.all([
        this.markers(stream, Number.MAX_SAFE_INTEGER, 'desc'),
        this.cql.read(this.q.topSeq, [stream, guess]).then((result) => result.first()),
      ]);
      if (page[0] === guess && row !== null) return num(row.get('seq'));
    }
    const last = (await this.lastFilled(stream, 1))[0];
    if (last === undefined) return 0;
    this.lastBuckets.set(stream, last.bucket);
    return last.top;
  }

  /**
   * The last `n` non-empty marked buckets, newest first. A marked bucket can be empty (its
   * append failed after the marker), so candidates are checked `n` at a time, in parallel.
   */
  async lastFilled(stream: string, n: number): Promise<FilledBucket[]> {
    const out: FilledBucket[] = [];
    for (
      let page = await this.markers(stream, Number.MAX_SAFE_INTEGER, 'desc');
      page.length > 0;
      page = await this.markers(stream, (page.at(-1) ?? 0) - 1, 'desc')
    ) {
      for (let i = 0; i < page.length; i += n) {
        const tops = await Promise.all(
          page.slice(i, i + n).map(async (bucket) => {
            const row = (await this.cql.read(this.q.topSeq, [stream, bucket])).first();
            return row === null ? undefined : { bucket, top: num(row.get('seq')) };
          }),
        );
        for (const top of tops) {
          if (top !== undefined) out.push(top);
          if (out.length === n) return out;
        }
      }
      if (page.length < BUCKET_PAGE || (page.at(-1) ?? 0) <= 0) return out;
    }
    return out;
  }

  /** appinfo → seq for those of `appinfos` stored in any bucket of the stream. */
  async findSeqs(stream: string, appinfos: string[]): Promise<Map<string, number>> {
    if (!appinfos.some(isStorableAppinfo)) return new Map();
    const buckets = (await this.cql.readAll(this.q.allMarkers, [stream])).map((row) => num(row.get('bucket')));
    return this.findInBuckets(stream, buckets, appinfos);
  }

  /** appinfo → seq for those of `appinfos` indexed in `buckets`, each checked against its entry. */
  async findInBuckets(stream: string, buckets: number[], appinfos: string[]): Promise<Map<string, number>> {
    const wanted = [...new Set(appinfos)].filter(isStorableAppinfo);
    if (wanted.length === 0 || buckets.length === 0) return new Map();
    const reads = chunks(buckets, BUCKET_CHUNK).flatMap((inBuckets) =>
      chunks(wanted, IN_CHUNK).map((names) => this.cql.readAll(this.q.lookup, [stream, inBuckets, names])),
    );
    const rows = (await Promise.all(reads)).flat();
    // An appinfo indexed in two buckets (a dedup-window miss, or a late write's row that
    // outlived its entry) is confirmed row by row; the lowest live seq is the original.
    const live = await this.confirmedPairs(
      stream,
      rows.map((row): [string, number] => [String(row.get('appinfo')), num(row.get('seq'))]),
    );
    const out = new Map<string, number>();
    for (const [appinfo, seq] of live) {
      const known = out.get(appinfo);
      if (known === undefined || seq < known) out.set(appinfo, seq);
    }
    return out;
  }

  /**
   * Every appinfo indexed in `bucket`, page by page (a full bucket has 65 536): the writer
   * loads its dedup window with it (see writer-state.ts) without holding the rows.
   */
  async eachIndexedAppinfo(stream: string, bucket: number, onPage: (appinfos: string[]) => void): Promise<void> {
    let pageState: string | undefined;
    do {
      const page = await this.cql.read(this.q.indexOf, [stream, bucket], {
        fetchSize: 5000,
        ...(pageState === undefined ? {} : { pageState }),
      });
      onPage(page.rows.map((row) => String(row.get('appinfo'))));
      pageState = page.pageState ?? undefined;
    } while (pageState !== undefined);
  }

  /** Keeps the pairs whose entry is stored with that appinfo (a dedup row may outlive its entry). */
  private async confirmedPairs(stream: string, pairs: [string, number][]): Promise<[string, number][]> {
    const byBucket = new Map<number, number[]>();
    for (const [, seq] of pairs) {
      const seqs = byBucket.get(bucketOf(seq)) ?? [];
      seqs.push(seq);
      byBucket.set(bucketOf(seq), seqs);
    }
    const stored = new Map<number, string>();
    await Promise.all(
      [...byBucket].flatMap(([bucket, seqs]) =>
        chunks([...new Set(seqs)], IN_CHUNK).map(async (list) => {
          for (const row of await this.cql.readAll(this.q.appinfosAt, [stream, bucket, list])) {
            stored.set(num(row.get('seq')), rowAppinfo(row));
          }
        }),
      ),
    );
    return pairs.filter(([appinfo, seq]) => stored.get(seq) === appinfo);
  }

  async getEntry(stream: string, seq: number): Promise<Entry | null> {
    if (!Number.isSafeInteger(seq) || seq < 1) return null;
    const row = (await this.cql.read(this.q.getEntry, [stream, bucketOf(seq), seq])).first();
    return row === null ? null : rowToEntry(row);
  }

  /** True when `seq` holds an entry. */
  async hasEntry(stream: string, seq: number): Promise<boolean> {
    if (!Number.isSafeInteger(seq) || seq < 1) return false;
    return (await this.cql.read(this.q.hasEntry, [stream, bucketOf(seq), seq])).rows.length > 0;
  }

  async readAfter(stream: string, afterSeq: number, limit: number): Promise<Entry[]> {
    if (!(limit > 0)) return [];
    const after = Math.max(0, Math.floor(afterSeq)); // seq > 2.5 ⇔ seq > 2 for integer seqs
    const start = bucketOf(after + 1);
    // The first bucket is read alongside the markers (one round trip for the usual inbox of one
    // bucket) and used only if it is marked.
    const [firstPage, early] = await Promise.all([
      this.markers(stream, start, 'asc'),
      this.cql.readAll(this.q.entriesAfter, [stream, start, after, limit]),
    ]);
    const out: Entry[] = [];
    for (let page = firstPage; ; page = await this.markers(stream, (page.at(-1) ?? 0) + 1, 'asc')) {
      for (const bucket of page) {
        if (out.length >= limit) return out;
        const rows =
          bucket === start
            ? early.slice(0, limit - out.length)
            : await this.cql.readAll(this.q.entriesAfter, [stream, bucket, after, limit - out.length]);
        out.push(...rows.map(rowToEntry));
      }
      if (page.length < BUCKET_PAGE) return out;
    }
  }

  async readBefore(stream: string, beforeSeq: number, limit: number): Promise<Entry[]> {
    if (!(limit > 0)) return [];
    const before = Math.min(Math.ceil(beforeSeq), Number.MAX_SAFE_INTEGER); // seq < 2.5 ⇔ seq < 3
    if (before <= 1) return [];
    const upper = before - 1;
    const out: Entry[] = [];
    for (
      let page = await this.markers(stream, bucketOf(upper), 'desc');
      ;
      page = await this.markers(stream, (page.at(-1) ?? 0) - 1, 'desc')
    ) {
      for (const bucket of page) {
        if (out.length >= limit) return out;
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

  /** All markers in (above, upTo]: where a failed append's far buckets lie (rare path). */
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
    topSeq: `SELECT seq FROM ${entries} WHERE ${k} = ? AND bucket = ? ORDER BY seq DESC LIMIT 1`,
    allMarkers: `SELECT bucket FROM ${buckets} WHERE ${k} = ?`,
    lookup: `SELECT appinfo, seq FROM ${appinfos} WHERE ${k} = ? AND bucket IN ? AND appinfo IN ?`,
    indexOf: `SELECT appinfo FROM ${appinfos} WHERE ${k} = ? AND bucket = ?`,
    appinfosAt: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq IN ?`,
    markersAsc: `SELECT bucket FROM ${buckets} WHERE ${k} = ? AND bucket >= ? LIMIT ?`,
    markersDesc: `SELECT bucket FROM ${buckets} WHERE ${k} = ? AND bucket <= ? ORDER BY bucket DESC LIMIT ?`,
    markersBetween: `SELECT bucket FROM ${buckets} WHERE ${k} = ? AND bucket > ? AND bucket <= ?`,
    getEntry: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq = ?`,
    hasEntry: `SELECT seq FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq = ?`,
    entriesAfter: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq > ? LIMIT ?`,
    entriesBefore: `SELECT ${ENTRY_SELECT} FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq <= ? ORDER BY seq DESC LIMIT ?`,
    // Writes (used by CqlSeqLog)
    insertEntry: `INSERT INTO ${entries} (${k}, bucket, ${ENTRY_COLUMNS.join(', ')}) VALUES (?, ?, ${ENTRY_COLUMNS.map(() => '?').join(', ')})`,
    insertAppinfo: `INSERT INTO ${appinfos} (${k}, bucket, appinfo, seq) VALUES (?, ?, ?, ?)`,
    deleteRange: `DELETE FROM ${entries} WHERE ${k} = ? AND bucket = ? AND seq > ? AND seq < ?`,
    insertMarker: `INSERT INTO ${buckets} (${k}, bucket) VALUES (?, ?) USING TTL ${MARKER_TTL_SECONDS}`,
  };
}
