/**
 * Group commit for the conversation index's writes. Each inbox's write is the statements of
 * one partition (every conv_* table is keyed by inbox alone: one mutation, applied
 * all-or-nothing); the writes of many inboxes that are due while earlier ones are on the wire
 * travel together in unlogged multi-partition batches, packed like the entries' appends
 * (append-plan.ts packBatches: a group is never split, one too big to share goes alone). A
 * multi-partition unlogged batch is atomic per partition only, which is all an inbox's index
 * needs. A failed batch fails the writes it carried and no other.
 */
import type { WriteGuard } from '@seqline/core';
import { packBatches } from './append-plan.ts';
import type { Cql, Statement } from './cql.ts';

interface IndexWrite {
  statements: Statement[];
  guard: WriteGuard | undefined;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Batches on the wire at once; the writes due meanwhile wait and go together. */
const MAX_IN_FLIGHT = 4;
/** Writes per round (each one partition's group). */
const MAX_ROUND = 256;

export class IndexWriteBatcher {
  private readonly queue: IndexWrite[] = [];
  private inFlight = 0;

  constructor(private readonly cql: Cql) {}

  /**
   * Writes one inbox's statements (one partition) as one mutation; the guard runs right before.
   * Each statement carries its own timestamp (changeStatements: the seq of its watermark), so
   * the inboxes of one batch need not share one.
   */
  write(statements: Statement[], guard: WriteGuard | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ statements, guard, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const round = this.queue.splice(0, MAX_ROUND);
      this.inFlight++;
      void this.send(round).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /**
   * Guards first (a deposed writer writes nothing). A writer paused past its guard cannot undo
   * its successor's writes, whatever the clocks: a write's timestamp is the seq it leaves the
   * index exact at, so a late one wins only over rows of lower seqs, and holds the state at its own.
   */
  private async send(round: IndexWrite[]): Promise<void> {
    const groups: { owner: IndexWrite; statements: Statement[] }[] = [];
    for (const write of round) {
      try {
        write.guard?.();
        groups.push({ owner: write, statements: write.statements });
      } catch (err) {
        write.reject(err);
      }
    }
    const failed = new Map<IndexWrite, unknown>();
    await Promise.all(
      packBatches(groups).map(async (batch) => {
        try {
          await this.cql.batch(batch.statements, true);
        } catch (err) {
          for (const owner of batch.owners) if (!failed.has(owner)) failed.set(owner, err);
        }
      }),
    );
    for (const { owner } of groups) {
      const err = failed.get(owner);
      if (err === undefined) owner.resolve();
      else owner.reject(err);
    }
  }
}
