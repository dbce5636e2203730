/**
 * Appends to a CQL seq log (the shared core of inbox timelines and group streams; layout in
 * seq-log-reader.ts). An append to an existing stream is three round trips, one server
 * operation each:
 *
 *   1. read   head + dedup index rows of the call's appinfos (one IN query on one partition)
 *   2. write  the entries: one unlogged batch per bucket partition (parallel)
 *   3. write  dedup rows + head + bucket markers: one batch on the stream's partition key
 *             (two tables, one key: Cassandra applies it as one mutation)
 *
 * Step 3 is the commit: readers only see seq <= head, so a reader never sees the head before
 * the entries, and a crash before step 3 leaves only invisible leftovers. Rarely, between 1
 * and 2: markers for a bucket beyond the head's next one (written before its entries so
 * leftovers are always findable), and clearing leftovers when the new seqs leave a gap. The
 * check-then-write dedup is safe because each stream has a single writer (DESIGN §5); inside
 * this process the appends of one stream are serialized as well.
 */
import { InternalError, silentLogger, type AppendOutcome, type Entry, type Logger, type WriteGuard } from '@seqline/core';

const noGuard: WriteGuard = () => undefined;
import { bucketOf, checkEntry, entryParams } from './entry-codec.ts';
import type { Cql, Statement } from './cql.ts';
import { KeyedSerializer } from './keyed-serializer.ts';
import { SeqLogReader, type SeqLogTables } from './seq-log-reader.ts';

/** Entry batches stay well below Cassandra's mutation and frame size limits. */
const MAX_BATCH_ROWS = 100;
const MAX_BATCH_BYTES = 512 * 1024;

export class CqlSeqLog extends SeqLogReader {
  private readonly writers = new KeyedSerializer();

  constructor(cql: Cql, tables: SeqLogTables, private readonly logger: Logger = silentLogger) {
    super(cql, tables);
  }

  async append(stream: string, batch: Entry[], guard: WriteGuard = noGuard): Promise<AppendOutcome[]> {
    if (batch.length === 0) return [];
    for (const entry of batch) checkEntry(stream, entry);
    return this.writers.run(stream, () => this.appendSerialized(stream, batch, guard));
  }

  /**
   * `guard` runs right before each write round trip: a writer paused between two of them
   * (SIGSTOP, a long GC) and deposed meanwhile must not finish its append after its successor
   * started — its entries would land below seqs clients already synced past (I2).
   */
  private async appendSerialized(stream: string, batch: Entry[], guard: WriteGuard): Promise<AppendOutcome[]> {
    const { head: stored, found: known } = await this.lookup(stream, batch.map((entry) => entry.appinfo));
    // Every check happens before the first write: a rejected call writes nothing.
    let head = stored;
    const outcomes: AppendOutcome[] = [];
    const toWrite: Entry[] = [];
    for (const entry of batch) {
      const original = known.get(entry.appinfo);
      if (original !== undefined) {
        outcomes.push({ seq: original, duplicate: true });
        continue;
      }
      if (entry.seq <= head) throw new InternalError(`seq ${entry.seq} is not above head ${head} of ${stream}`);
      head = entry.seq;
      known.set(entry.appinfo, entry.seq);
      outcomes.push({ seq: entry.seq, duplicate: false });
      toWrite.push(entry);
    }
    const first = toWrite[0]?.seq;
    if (first === undefined) return outcomes;

    const probed = bucketOf(stored + 1);
    const buckets = [...new Set(toWrite.map((entry) => bucketOf(entry.seq)))];
    const contiguous = first === stored + 1 && head - first + 1 === toWrite.length;
    guard();
    await Promise.all([
      contiguous ? undefined : this.clearLeftovers(stream, stored, head, guard),
      this.cql.batch(buckets.filter((bucket) => bucket > probed).map((bucket) => ({ query: this.q.insertMarker, params: [stream, bucket] }))),
    ]);
    guard();
    await Promise.all(entryBatches(stream, toWrite, this.q.insertEntry).map((statements) => this.cql.batch(statements)));
    guard();
    await this.cql.batch([
      ...toWrite.map((entry) => ({ query: this.q.insertAppinfo, params: [stream, entry.appinfo, entry.seq] })),
      ...buckets.map((bucket) => ({ query: this.q.insertMarker, params: [stream, bucket] })), // (re)sets the TTL
      { query: this.q.setHead, params: [stream, head, head] },
    ]);
    return outcomes;
  }

  /**
   * Entries above the head are leftovers of an append that failed before its commit (their
   * seqs were burnt; the writer moved on). They must go before this append moves the head to
   * `upTo`, or they would surface (a second copy of a resent message, I3). All leftovers lie
   * above the head: in the bucket right after it (always probed) or in a marked bucket. A
   * contiguous append (head+1, head+2, …) overwrites every seq it passes, so only a gap costs this.
   */
  private async clearLeftovers(stream: string, head: number, upTo: number, guard: WriteGuard): Promise<void> {
    const probed = bucketOf(head + 1);
    const candidates = [probed, ...(await this.markersBetween(stream, probed, bucketOf(upTo)))];
    await Promise.all(candidates.map(async (bucket) => {
      const probe = await this.cql.read(this.q.probeRange, [stream, bucket, head, upTo]);
      if (probe.rows.length === 0) return;
      this.logger.warn({ stream, bucket, above: head, upTo }, 'clearing entries of a failed append');
      guard();
      await this.cql.write(this.q.deleteRange, [stream, bucket, head, upTo]);
    }));
  }
}

/** Unlogged batches of entry inserts, each within one bucket partition and size-bounded. */
function entryBatches(stream: string, entries: Entry[], insert: string): Statement[][] {
  const byBucket = new Map<number, Statement[]>();
  const sizes = new Map<number, number>();
  const out: Statement[][] = [];
  for (const entry of entries) {
    const bucket = bucketOf(entry.seq);
    const params = [stream, bucket, ...entryParams(entry)];
    const bytes = params.reduce<number>((sum, p) => sum + (typeof p === 'string' ? p.length * 3 : 16), 0);
    let current = byBucket.get(bucket);
    if (current === undefined || current.length >= MAX_BATCH_ROWS || (sizes.get(bucket) ?? 0) + bytes > MAX_BATCH_BYTES) {
      current = [];
      byBucket.set(bucket, current);
      sizes.set(bucket, 0);
      out.push(current);
    }
    current.push({ query: insert, params });
    sizes.set(bucket, (sizes.get(bucket) ?? 0) + bytes);
  }
  return out;
}

