/**
 * The failed attempts of each job of the NATS work queue, as the queue records them: JetStream's
 * delivery count also counts deliveries that ended without an outcome (a worker killed or
 * stopped mid-job, its ack wait run out), which are not failures of the job, and a message cannot
 * be rewritten on a retry. One record per job message, in `<prefix>_JOB_FAILURES` under
 * `<subjectPrefix>failures.<queue>.<seq of the job message>` (one message kept per subject), its
 * body the number of failed attempts so far; purged once the job is acked or dead-lettered.
 * A replay is a new job message, so its count starts at 0.
 */
import type { Logger } from '@seqline/core';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { JobTopology } from './nats-streams.ts';

export class NatsJobFailures {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly topology: JobTopology,
    private readonly logger: Logger,
  ) {}

  /**
   * The failed attempts recorded for the job message at `jobSeq`, or undefined when the record
   * cannot be read now (the caller falls back to the delivery count).
   */
  async count(queue: string, jobSeq: number): Promise<number | undefined> {
    try {
      const stored = await this.jsm.streams.getMessage(this.topology.failuresStream, {
        last_by_subj: this.topology.failureSubject(queue, jobSeq),
      });
      if (stored === null) return 0;
      const failures: unknown = stored.json();
      return typeof failures === 'number' && Number.isSafeInteger(failures) && failures >= 0 ? failures : undefined;
    } catch (err) {
      this.logger.warn({ err, queue, jobSeq }, 'job failure count not read; counting deliveries instead');
      return undefined;
    }
  }

  /** Records `failures` failed attempts; false when the record could not be written (the failure then goes uncounted). */
  async record(queue: string, jobSeq: number, failures: number): Promise<boolean> {
    try {
      await this.js.publish(this.topology.failureSubject(queue, jobSeq), JSON.stringify(failures));
      return true;
    } catch (err) {
      this.logger.warn({ err, queue, jobSeq, failures }, 'job failure not recorded; it goes uncounted');
      return false;
    }
  }

  /** Drops the record of a job that is done (acked or dead-lettered); a record left behind expires with the stream's max age. */
  async forget(queue: string, jobSeq: number): Promise<void> {
    await this.jsm.streams
      .purge(this.topology.failuresStream, { filter: this.topology.failureSubject(queue, jobSeq) })
      .catch((err: unknown) => {
        this.logger.warn({ err, queue, jobSeq }, 'job failure record not purged; it expires with the stream');
      });
  }
}
