import { durableName } from './subject-token.ts';
import { InternalError } from '@seqline/core';
import type { Json } from '@seqline/core';
import { nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { ConsumerConfig, JetStreamManager, StreamConfig } from '@nats-io/jetstream';

/** Stream and subject names of one deployment of the work queue. */
export interface JobTopology {
  jobsStream: string;
  deadStream: string;
  jobSubject(queue: string): string;
  deadSubject(queue: string): string;
  jobsWildcard: string;
  deadWildcard: string;
  /** The failed attempts of each job message (nats-job-failures.ts). */
  failuresStream: string;
  failureSubject(queue: string, jobSeq: number): string;
  failuresWildcard: string;
}

export function jobTopology(streamPrefix: string, subjectPrefix: string): JobTopology {
  return {
    jobsStream: `${streamPrefix}_JOBS`,
    deadStream: `${streamPrefix}_DLQ`,
    jobSubject: (queue) => `${subjectPrefix}jobs.${queue}`,
    deadSubject: (queue) => `${subjectPrefix}dlq.${queue}`,
    jobsWildcard: `${subjectPrefix}jobs.>`,
    deadWildcard: `${subjectPrefix}dlq.>`,
    failuresStream: `${streamPrefix}_JOB_FAILURES`,
    failureSubject: (queue, jobSeq) => `${subjectPrefix}failures.${queue}.${jobSeq}`,
    failuresWildcard: `${subjectPrefix}failures.>`,
  };
}

/** Body of a message in the jobs stream. */
export interface JobEnvelope {
  id: string;
  queue: string;
  payload: Json;
  /** When the job was first accepted (kept across replays' retries, reset by a replay). */
  createdAt: number;
}

/** Body of a message in the dead-letter stream: the job as the port reports it. */
export interface DeadJobEnvelope extends JobEnvelope {
  attempts: number;
  deadAt: number;
  lastError?: string;
}

export function isJobEnvelope(value: unknown): value is JobEnvelope {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === 'string' && typeof v.queue === 'string' && typeof v.createdAt === 'number' && 'payload' in v;
}

const API_STREAM_NOT_FOUND = 10059;
const API_CONSUMER_NOT_FOUND = 10014;

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
  retention: RetentionPolicy,
): Promise<void> {
  try {
    const info = await jsm.streams.info(config.name);
    if (info.config.retention !== retention) {
      throw new InternalError(`stream ${config.name} exists with retention ${info.config.retention}, expected ${retention}`);
    }
    if (info.config.duplicate_window !== config.duplicate_window) {
      await jsm.streams.update(config.name, { ...info.config, duplicate_window: config.duplicate_window });
    }
    return;
  } catch (err) {
    if (!isApiError(err, API_STREAM_NOT_FOUND)) throw err;
  }
  try {
    await jsm.streams.add({ ...config, retention });
  } catch (err) {
    // Another process created it between our info and add: fine if it is there now.
    await jsm.streams.info(config.name).catch(() => {
      throw err;
    });
  }
}

/** How long a job's failure record outlives its last write when nothing purges it (its job was lost with a stream). */
const FAILURE_RECORD_MAX_AGE_MS = 7 * 24 * 3_600_000;

/**
 * Jobs: work-queue retention (a message lives until acked), file storage, one replica, and a
 * duplicate window for `Nats-Msg-Id` dedup. Dead letters: plain limits retention, kept until
 * replayed or purged by an operator. Failure records: the newest per job message, for a week
 * at most.
 */
export async function ensureJobStreams(jsm: JetStreamManager, topology: JobTopology, duplicateWindowMs: number): Promise<void> {
  const common = { storage: StorageType.File, num_replicas: 1, duplicate_window: nanos(duplicateWindowMs) };
  await ensureStream(jsm, { ...common, name: topology.jobsStream, subjects: [topology.jobsWildcard] }, RetentionPolicy.Workqueue);
  await ensureStream(jsm, { ...common, name: topology.deadStream, subjects: [topology.deadWildcard] }, RetentionPolicy.Limits);
  await ensureStream(
    jsm,
    {
      ...common,
      name: topology.failuresStream,
      subjects: [topology.failuresWildcard],
      max_msgs_per_subject: 1,
      max_age: nanos(FAILURE_RECORD_MAX_AGE_MS),
    },
    RetentionPolicy.Limits,
  );
}

export interface ConsumerTuning {
  ackWaitMs: number;
  /** Deliveries the server allows per job. */
  maxDeliver: number;
  maxAckPending: number;
}

/**
 * One durable pull consumer per queue, shared by every process that consumes it. A delivery
 * neither acked nor kept alive with `working()` within the ack wait (its worker died) is
 * redelivered. The consumer's own `backoff` list is deliberately left unset: the server makes
 * backoff[0] the ack wait (nats-server#5861) and does not apply it to naks (#4726), so retry
 * delays are given per nak instead, and crash detection keeps its own, longer, ack wait.
 */
export async function ensureQueueConsumer(
  jsm: JetStreamManager,
  topology: JobTopology,
  queue: string,
  tuning: ConsumerTuning,
): Promise<void> {
  const updatable: Partial<ConsumerConfig> = {
    ack_wait: nanos(tuning.ackWaitMs),
    backoff: [], // clears a list an older config may have set (it would override ack_wait)
    max_deliver: tuning.maxDeliver,
    max_ack_pending: tuning.maxAckPending,
  };
  try {
    await jsm.consumers.info(topology.jobsStream, durableName(queue));
    await jsm.consumers.update(topology.jobsStream, durableName(queue), updatable);
    return;
  } catch (err) {
    if (!isApiError(err, API_CONSUMER_NOT_FOUND)) throw err;
  }
  await jsm.consumers.add(topology.jobsStream, {
    ...updatable,
    durable_name: durableName(queue),
    filter_subject: topology.jobSubject(queue),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
  });
}
