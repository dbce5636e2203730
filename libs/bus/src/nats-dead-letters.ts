import { durableName } from './subject-token.ts';
import type { Logger, StoredJob } from '@seqline/core';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { isJobEnvelope, type DeadJobEnvelope, type JobEnvelope, type JobTopology } from './nats-streams.ts';

interface DeadLetterRecord {
  seq: number;
  job: DeadJobEnvelope;
}

/** Dead letters of the NATS work queue: a limits-retention stream, one message per dead job. */
export class NatsDeadLetters {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly topology: JobTopology,
    private readonly logger: Logger,
  ) {}

  /**
   * Parks a job. `jobSeq` (its seq in the jobs stream) makes the publish idempotent, so the
   * handler path and the max-deliveries advisory cannot both file the same delivery.
   */
  async bury(job: JobEnvelope, jobSeq: number, attempts: number, lastError: string | undefined, now: number): Promise<void> {
    const dead: DeadJobEnvelope = { ...job, attempts, deadAt: now, ...(lastError === undefined ? {} : { lastError }) };
    await this.js.publish(this.topology.deadSubject(job.queue), JSON.stringify(dead), { msgID: `${job.id}~dead~${jobSeq}` });
    this.logger.error({ queue: job.queue, id: job.id, attempts, lastError }, 'job dead-lettered');
  }

  async list(): Promise<StoredJob[]> {
    return (await this.records()).map(({ job }) => toStoredJob(job));
  }

  /** Re-enqueues the newest dead copy of `id` with a fresh give-up window, then forgets all its copies. */
  async replay(id: string, now: number): Promise<boolean> {
    const copies = (await this.records()).filter((record) => record.job.id === id);
    const newest = copies[copies.length - 1];
    if (!newest) return false;
    const revived: JobEnvelope = { id, queue: newest.job.queue, payload: newest.job.payload, createdAt: now };
    // The original id may still be inside the jobs stream's duplicate window: use a fresh msg id.
    await this.js.publish(this.topology.jobSubject(revived.queue), JSON.stringify(revived), { msgID: `${id}~replay~${newest.seq}` });
    for (const copy of copies) await this.forget(copy.seq);
    this.logger.info({ queue: revived.queue, id }, 'dead letter replayed');
    return true;
  }

  /**
   * A delivery that reached max_deliver without any ack (e.g. its consumer crashed on the last
   * attempt) stays in the work-queue stream, never delivered again; the server announces it with
   * an advisory, upon which one process (queue group) moves it here. Advisories are not durable:
   * one emitted while no consumer process runs is missed and the job stays in the jobs stream.
   */
  watchMaxDeliveries(nc: NatsConnection, queue: string, clock: () => number): Subscription {
    const subject = `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${this.topology.jobsStream}.${durableName(queue)}`;
    return nc.subscribe(subject, {
      queue: `${this.topology.jobsStream}-dlq`,
      callback: (err, msg) => {
        if (err) return;
        const advisory = msg.json<{ stream_seq?: number; deliveries?: number }>();
        if (typeof advisory.stream_seq !== 'number') return;
        void this.buryUnacked(advisory.stream_seq, advisory.deliveries ?? 0, clock()).catch((buryErr: unknown) => {
          this.logger.error({ err: buryErr, queue, seq: advisory.stream_seq }, 'could not dead-letter an exhausted job');
        });
      },
    });
  }

  private async buryUnacked(seq: number, deliveries: number, now: number): Promise<void> {
    const stored = await this.jsm.streams.getMessage(this.topology.jobsStream, { seq });
    if (!stored) return; // already acked or moved
    const job: unknown = stored.json();
    if (!isJobEnvelope(job)) {
      this.logger.error({ seq }, 'exhausted job has an unknown format; leaving it in the stream');
      return;
    }
    await this.bury(job, seq, deliveries, 'max deliveries reached without an ack (worker crashed or timed out)', now);
    await this.jsm.streams.deleteMessage(this.topology.jobsStream, seq, false).catch(() => false);
  }

  private async forget(seq: number): Promise<void> {
    await this.jsm.streams.deleteMessage(this.topology.deadStream, seq, false).catch(() => false);
  }

  /** Reads the whole dead-letter stream with a short-lived ordered consumer. */
  private async records(): Promise<DeadLetterRecord[]> {
    const info = await this.jsm.streams.info(this.topology.deadStream);
    if (info.state.messages === 0) return [];
    const reader = await this.js.consumers.get(this.topology.deadStream);
    const out: DeadLetterRecord[] = [];
    const batch = await reader.fetch({ max_messages: info.state.messages, expires: 2_000 });
    for await (const msg of batch) {
      const job: unknown = msg.json();
      if (isJobEnvelope(job)) out.push({ seq: msg.seq, job: job as DeadJobEnvelope });
      else this.logger.warn({ seq: msg.seq }, 'skipping a dead letter of unknown format');
      if (msg.info.pending === 0 || msg.seq >= info.state.last_seq) break;
    }
    return out;
  }
}

function toStoredJob(job: DeadJobEnvelope): StoredJob {
  return {
    id: job.id,
    queue: job.queue,
    payload: job.payload,
    attempts: job.attempts,
    notBefore: job.deadAt,
    createdAt: job.createdAt,
    ...(job.lastError === undefined ? {} : { lastError: job.lastError }),
  };
}
