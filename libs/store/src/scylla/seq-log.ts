/**
 * Appends to a CQL seq log (the shared core of inbox timelines and group streams; layout in
 * seq-log-reader.ts). An append is three round trips, shared with the other streams' appends
 * in flight (append-pipeline.ts):
 *
 *   1. read   head + dedup index rows of the call's appinfos
 *   2. write  the entries (unlogged batches)
 *   3. write  dedup rows + head (+ bucket markers): one partition key over two tables, so
 *             Cassandra applies a stream's commit as one mutation
 *
 * Step 3 is the commit: readers only see seq <= head, so a reader never sees the head before
 * the entries, and a crash before step 3 leaves only invisible leftovers. Rarely, between 1
 * and 2: markers for a bucket beyond the head's next one (written before its entries so
 * leftovers are always findable), and clearing leftovers when the new seqs leave a gap. The
 * check-then-write dedup is safe because each stream has a single writer (DESIGN §5); inside
 * this process the appends of one stream are serialized as well.
 */
import { silentLogger, type AppendOutcome, type Entry, type Logger, type WriteGuard } from '@seqline/core';
import { SeqLogAppendPipeline, type AppendPipelineOptions } from './append-pipeline.ts';
import type { Cql } from './cql.ts';
import { bucketOf, checkEntry } from './entry-codec.ts';
import { KeyedSerializer } from './keyed-serializer.ts';
import { SeqLogReader, type SeqLogTables } from './seq-log-reader.ts';

const noGuard: WriteGuard = () => undefined;

export class CqlSeqLog extends SeqLogReader {
  private readonly writers = new KeyedSerializer();
  private readonly pipeline: SeqLogAppendPipeline;

  constructor(cql: Cql, tables: SeqLogTables, private readonly logger: Logger = silentLogger, pipeline: AppendPipelineOptions = {}) {
    super(cql, tables);
    this.pipeline = new SeqLogAppendPipeline(this, logger, (stream, head, upTo, guard) => this.clearLeftovers(stream, head, upTo, guard), pipeline);
  }

  /**
   * `guard` runs right before each write round trip: a writer paused between two of them
   * (SIGSTOP, a long GC) and deposed meanwhile must not finish its append after its successor
   * started — its entries would land below seqs clients already synced past (I2).
   */
  async append(stream: string, batch: Entry[], guard: WriteGuard = noGuard): Promise<AppendOutcome[]> {
    if (batch.length === 0) return [];
    for (const entry of batch) checkEntry(stream, entry);
    return this.writers.run(stream, () => this.pipeline.submit(stream, batch, guard));
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
