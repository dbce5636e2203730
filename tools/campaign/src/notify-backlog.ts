/**
 * What may still bring an offline notification, counted: the jobs of the notify queue
 * (`hooks.notify`) not yet done — waiting, running, or waiting out a retry backoff — and the
 * items the inbox owners' notifiers still hold (open windows, notifications retrying their
 * enqueue). Both zero: no notification can come any more, so the settle wait can stop.
 *
 * Where each count is read: the pending jobs through the admin API (`GET /v1/admin/jobs`) in
 * embedded mode, where they sit in the LMDB job store; in distributed mode they live in the
 * JetStream jobs stream (work-queue retention: a message stays until its job is acked), read as
 * that stream's message count on the queue's subject. The held items are the
 * `seqline_bound_fill{bound="SEQLINE_MAX_NOTIFY_ITEMS"}` gauge of the owners' /metrics: the
 * embedded server's, or every worker's (SEQLINE_WORKER_HTTP_PORT).
 */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { OFFLINE_NOTIFY_QUEUE } from '@seqline/messaging';
import { DistributedSystem } from './system-distributed.ts';
import { admin, type Clocks, type SystemUnderTest } from './system.ts';

export interface NotifyBacklog {
  pendingJobs: number;
  heldItems: number;
}

const HELD_GAUGE = /^seqline_bound_fill\{bound="SEQLINE_MAX_NOTIFY_ITEMS"\} (\d+(?:\.\d+)?)$/m;

async function heldItems(metricsUrl: string): Promise<number> {
  const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${metricsUrl}: ${res.status}`);
  const match = HELD_GAUGE.exec(await res.text());
  if (!match?.[1]) throw new Error(`${metricsUrl}: no SEQLINE_MAX_NOTIFY_ITEMS fill`);
  return Number(match[1]);
}

/** Reads the backlog of one round's system; a read that fails throws (the caller polls again). */
export class NotifyBacklogProbe {
  private nats?: Promise<{ nc: NatsConnection; jsm: JetStreamManager }>;

  constructor(
    private readonly sys: SystemUnderTest,
    private readonly clocks: Clocks,
  ) {}

  /** Where the counts come from, for the round's log. */
  describe(): string {
    return this.sys instanceof DistributedSystem
      ? `JetStream subject ${this.jobsSubject(this.sys)} + workers' /metrics`
      : `GET /v1/admin/jobs?queue=${OFFLINE_NOTIFY_QUEUE} + /metrics`;
  }

  async read(): Promise<NotifyBacklog> {
    const sys = this.sys;
    if (!(sys instanceof DistributedSystem)) {
      // Held first, then pending: a notification moving from a window to its job is seen in one
      // of the two unless its enqueue spans both reads (the caller wants two quiet reads in a row).
      const held = await heldItems(`${sys.httpBase()}/metrics`);
      const jobs = await admin(sys, this.clocks, 'GET', `/jobs?queue=${OFFLINE_NOTIFY_QUEUE}&limit=1`);
      if (typeof jobs.pending !== 'number') throw new Error('the embedded server did not count its pending jobs');
      return { pendingJobs: jobs.pending, heldItems: held };
    }
    let held = 0;
    for (const w of sys.cluster.workers) {
      if (!w.alive) throw new Error(`${w.name} is down`);
      held += await heldItems(`${w.httpUrl}/metrics`);
    }
    return { pendingJobs: await this.pendingInStream(sys), heldItems: held };
  }

  async close(): Promise<void> {
    const nats = this.nats;
    this.nats = undefined;
    if (nats) await (await nats.catch(() => undefined))?.nc.close();
  }

  /** libs/runtime's distributed.ts: subjects under `<namespace>.`, and libs/bus's `jobs.<queue>`. */
  private jobsSubject(sys: DistributedSystem): string {
    return `${sys.cluster.namespace}.jobs.${OFFLINE_NOTIFY_QUEUE}`;
  }

  private async pendingInStream(sys: DistributedSystem): Promise<number> {
    const url = sys.cluster.workers[0]?.env.NATS_URL ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
    this.nats ??= (async () => {
      const nc = await connect({ servers: url, timeout: 5_000 });
      return { nc, jsm: await jetstreamManager(nc) };
    })();
    const { jsm } = await this.nats.catch((err: unknown) => {
      this.nats = undefined;
      throw err;
    });
    const subject = this.jobsSubject(sys);
    const stream = await jsm.streams.find(subject);
    const info = await jsm.streams.info(stream, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  }
}
