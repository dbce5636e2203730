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
 *
 * Dedup rows are keyed by core's dedupKeyOf (`<from>/<appinfo>` for a message). Rows written by
 * the previous version are keyed by the plain appinfo; they expire with their entries (180 days)
 * and until then a lookup of a message key also asks for its appinfo (legacyIndexKey), and the
 * entry check keeps such a row only when the entry's sender is the one asked for (answersFor).
 */
import { LruMap, answersFor, dedupKeyOf, isStorableKey, legacyIndexKey, type DedupKey, type Entry } from '@seqline/core';
import { chunks, num, type Cql } from './cql.ts';
import { ENTRY_COLUMNS, ENTRY_SELECT, bucketOf, rowToEntry } from './entry-codec.ts';
import { MARKER_TTL_SECONDS } from './bucket-marker-memo.ts';

export interface SeqLogTables {
  entries: string;
  appinfos: string;
  buckets: string;
  /** Partition key column of all three tables (`inbox` or `grp`). */
  key: string;
}

/**
 * What a keyed lookup found: each key's original, the entry at its lowest live seq (read anyway
 * to check the row: an append answers a duplicate with it), and the previous version's rows that
 * hold a key's text but index another message (its appinfo reads "<from>/<appinfo>"): an append
 * of that key in the row's bucket would overwrite them, so the writer re-keys them first.
 */
export interface KeyLookup {
  found: Map<DedupKey, Entry>;
  displaced: Map<DedupKey, { bucket: number; seq: number; key: DedupKey }>;
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
   * The last `n` non-empty marked buckets below `below`, newest first. A marked bucket can be
   * empty (its append failed after the marker), so candidates are checked `n` at a time, in parallel.
   */
  async lastFilled(stream: string, n: number, below = Number.MAX_SAFE_INTEGER + 1): Promise<FilledBucket[]> {
    const out: FilledBucket[] = [];
    for (
      let page = await this.markers(stream, below - 1, 'desc');
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

  /** key → seq for those of `keys` stored in any bucket of the stream. */
  async findSeqs(stream: string, keys: readonly DedupKey[]): Promise<Map<DedupKey, number>> {
    if (!keys.some(isStorableKey)) return new Map();
    const buckets = (await this.cql.readAll(this.q.allMarkers, [stream])).map((row) => num(row.get('bucket')));
    const { found } = await this.lookupKeys(stream, buckets, keys);
    return new Map([...found].map(([key, original]) => [key, original.seq]));
  }

  /**
   * The seqs of `keys` indexed in `buckets`: each row found (under the key, or under its
   * previous layout's appinfo) is believed only if its entry is stored and is the one the key
   * names. A key indexed twice (a dedup-window miss, a late write's row that outlived its entry)
   * answers its lowest live seq, the original.
   */
  async lookupKeys(stream: string, buckets: number[], keys: readonly DedupKey[]): Promise<KeyLookup> {
    const out: KeyLookup = { found: new Map(), displaced: new Map() };
    const wanted = [...new Set(keys)].filter(isStorableKey);
    if (wanted.length === 0 || buckets.length === 0) return out;
    const asked = new Set<string>(wanted);
    for (const key of wanted) {
      const legacy = legacyIndexKey(key);
      if (legacy !== undefined) asked.add(legacy);
    }
    const names = [...asked];
    const reads = chunks(buckets, BUCKET_CHUNK).flatMap((inBuckets) =>
      chunks(names, IN_CHUNK).map((list) => this.cql.readAll(this.q.lookup, [stream, inBuckets, list])),
    );
    const rows = (await Promise.all(reads)).flat().map((row) => ({ name: String(row.get('appinfo')), seq: num(row.get('seq')) }));
    const stored = await this.storedAt(
      stream,
      rows.map((row) => row.seq),
    );
    for (const key of wanted) {
      const legacy = legacyIndexKey(key);
      for (const { name, seq } of rows) {
        if (name !== key && name !== legacy) continue;
        const entry = stored.get(seq);
        if (entry === undefined) continue; // the row outlived its entry
        if (answersFor(entry, key)) {
          const known = out.found.get(key);
          if (known === undefined || seq < known.seq) out.found.set(key, entry);
        } else if (name === key && entry.appinfo === key) {
          out.displaced.set(key, { bucket: bucketOf(seq), seq, key: dedupKeyOf(entry) });
        }
      }
    }
    return out;
  }

  /**
   * Every key indexed in `bucket` (dedup keys, and the previous layout's appinfos), page by page
   * (a full bucket has 65 536): the writer loads its dedup window with it (see writer-state.ts)
   * without holding the rows.
   */
  async eachIndexedKey(stream: string, bucket: number, onPage: (keys: string[]) => void): Promise<void> {
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

  /** The entries stored at `seqs` (absent ones left out). */
  private async storedAt(stream: string, seqs: readonly number[]): Promise<Map<number, Entry>> {
    const byBucket = new Map<number, number[]>();
    for (const seq of seqs) {
      const list = byBucket.get(bucketOf(seq)) ?? [];
      list.push(seq);
      byBucket.set(bucketOf(seq), list);
    }
    const stored = new Map<number, Entry>();
    await Promise.all(
      [...byBucket].flatMap(([bucket, list]) =>
        chunks([...new Set(list)], IN_CHUNK).map(async (part) => {
          for (const row of await this.cql.readAll(this.q.appinfosAt, [stream, bucket, part])) {
            stored.set(num(row.get('seq')), rowToEntry(row));
          }
        }),
      ),
    );
    return stored;
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
