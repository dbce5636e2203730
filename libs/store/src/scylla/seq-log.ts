/**
 * Appends to a CQL seq log (the shared core of inbox timelines and group streams; layout in
 * seq-log-reader.ts). Each entry is written with its dedup row as one mutation, and the usual
 * append reads nothing: the writer remembers each stream's head and dedup window between
 * appends (writer-state.ts), and appends of many streams share batches (append-pipeline.ts).
 * The check-then-write dedup is safe because each stream has a single writer per term
 * (docs/architecture.md, "Single-writer inboxes", WriteGuard.term); inside this process the appends of one stream are serialized.
 */
import { KeyedQueue, assertStorableEntry, silentLogger, type Entry, type Logger, type StoredOutcome, type WriteGuard } from '@seqline/core';
import { SeqLogAppendPipeline, type AppendPipelineOptions } from './append-pipeline.ts';
import type { Cql } from './cql.ts';
import { bucketOf } from './entry-codec.ts';
import { SeqLogReader, type SeqLogTables } from './seq-log-reader.ts';

const noGuard: WriteGuard = () => undefined;

export class CqlSeqLog extends SeqLogReader {
  private readonly writers = new KeyedQueue();
  private readonly pipeline: SeqLogAppendPipeline;

  constructor(
    cql: Cql,
    tables: SeqLogTables,
    private readonly logger: Logger = silentLogger,
    pipeline: AppendPipelineOptions = {},
  ) {
    super(cql, tables);
    this.pipeline = new SeqLogAppendPipeline(
      this,
      logger,
      (stream, head, below, guard) => this.clearGap(stream, head, below, guard),
      pipeline,
    );
  }

  /**
   * `guard` runs right before each write round trip: a writer paused between two of them
   * (SIGSTOP, a long GC) and deposed meanwhile must not finish its append after its successor
   * started — its entries would land below seqs clients already synced past (I2).
   */
  append(stream: string, batch: Entry[], guard: WriteGuard = noGuard): Promise<StoredOutcome[]> {
    // Not async: returning the pipeline's promise from an async function costs every append two
    // more microtask hops.
    if (batch.length === 0) return Promise.resolve([]);
    try {
      for (const entry of batch) assertStorableEntry(stream, entry);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.writers.run(stream, () => this.pipeline.submit(stream, batch, guard));
  }

  /**
   * Seqs between the head and an append's first seq were burnt by failed appends (or a writer
   * before a takeover). One of those writes may still land, or may have landed in a bucket whose
   * marker it failed to write; either would surface below seqs clients then hold (a skip, or a
   * second copy of a resent message). A range delete, written before the new entries, shadows
   * them: it is newer than any write sent before it. They can lie in the bucket right after the
   * head or in a marked bucket (a far bucket's marker is written before its entries).
   */
  private async clearGap(stream: string, head: number, below: number, guard: WriteGuard): Promise<void> {
    if (below <= head + 1) return;
    const next = bucketOf(head + 1);
    const buckets = [next, ...(await this.markersBetween(stream, next, bucketOf(below - 1)))];
    this.logger.debug({ stream, above: head, below, buckets }, 'clearing the gap below an append');
    guard();
    await this.cql.batch(
      buckets.map((bucket) => ({ query: this.q.deleteRange, params: [stream, bucket, head, below] })),
      true,
      this.cql.clockTimestamp(),
    );
  }
}
