/**
 * Group commit for seq-log appends: the appends of many streams that arrive while earlier ones
 * are on the wire travel together, three round trips per group instead of three per append.
 *
 *   1. read   heads + dedup rows of every stream in the group (IN on the partition key)
 *   2. write  the entries, packed into few unlogged batches
 *   3. write  each stream's commit: dedup rows + head (+ bucket markers), packed likewise
 *
 * Per stream nothing changes (see seq-log.ts): its entries are durable before its head moves,
 * and its commit is one partition's statements in one batch, so it applies as one mutation —
 * a multi-partition unlogged batch is atomic per partition, which is all a commit needs. The
 * streams of a group are independent: a failed batch, a failed check or a fencing guard fails
 * only the appends whose statements it carried.
 */
import type { AppendOutcome, Entry, Logger, WriteGuard } from '@seqline/core';
import { entryBatches, packBatches, planAppend, type AppendPlan } from './append-plan.ts';
import type { Statement } from './cql.ts';
import { BUCKET_MARKER_REFRESH_MS, BucketMarkerMemo } from './bucket-marker-memo.ts';
import type { SeqLogReader } from './seq-log-reader.ts';

export interface AppendPipelineOptions {
  /** Appends per group (default 64). */
  maxGroup?: number;
  /** Groups on the wire at once (default 8). */
  maxInFlight?: number;
}

interface Job {
  stream: string;
  batch: Entry[];
  guard: WriteGuard;
  resolve: (outcomes: AppendOutcome[]) => void;
  reject: (err: unknown) => void;
  plan?: AppendPlan;
}

/** Streams × appinfos of one multi-partition lookup (a cartesian IN). */
const MAX_LOOKUP_CELLS = 2048;
/** appinfos of one append above which it is looked up on its own. */
const MAX_SHARED_LOOKUP_APPINFOS = 64;

export class SeqLogAppendPipeline {
  private readonly queue: Job[] = [];
  private readonly maxGroup: number;
  private readonly maxInFlight: number;
  private readonly markers = new BucketMarkerMemo();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly log: SeqLogReader,
    private readonly logger: Logger,
    private readonly clearLeftovers: (stream: string, head: number, upTo: number, guard: WriteGuard) => Promise<void>,
    options: AppendPipelineOptions = {},
  ) {
    this.maxGroup = options.maxGroup ?? 64;
    this.maxInFlight = options.maxInFlight ?? 8;
  }

  /** Appends `batch` to `stream`; the caller keeps one append per stream in flight. */
  submit(stream: string, batch: Entry[], guard: WriteGuard): Promise<AppendOutcome[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, batch, guard, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // Appends made in the same tick start as one group.
      queueMicrotask(() => { this.scheduled = false; this.pump(); });
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxGroup);
      this.inFlight++;
      void this.run(group).catch((err: unknown) => {
        this.logger.error({ err }, 'append group failed unexpectedly');
        for (const job of group) job.reject(err);
      }).finally(() => { this.inFlight--; this.pump(); });
    }
  }

  private async run(group: Job[]): Promise<void> {
    const looked = await this.lookupAll(group);
    const live: Job[] = [];
    for (const job of looked) {
      const plan = job.plan as AppendPlan;
      if (plan.toWrite.length === 0) job.resolve(plan.outcomes);
      else live.push(job);
    }
    const prepared = await this.each(live, (job) => this.prepare(job));
    const written = await this.writeStage(prepared, (job) =>
      entryBatches(job.stream, (job.plan as AppendPlan).toWrite, this.log.q.insertEntry));
    const now = Date.now();
    const committed = await this.writeStage(written, (job) => [this.commitStatements(job, now)]);
    for (const job of committed) {
      const plan = job.plan as AppendPlan;
      for (const bucket of plan.buckets) this.markers.wrote(job.stream, bucket, now);
      job.resolve(plan.outcomes);
    }
  }

  /** Reads heads and dedup rows, and plans each append; jobs whose lookup or plan fails are rejected. */
  private async lookupAll(group: Job[]): Promise<Job[]> {
    const alone: Job[] = [];
    const chunks: Job[][] = [];
    let chunk: Job[] = [];
    let names = new Set<string>();
    for (const job of group) {
      const appinfos = new Set(job.batch.map((entry) => entry.appinfo));
      if (appinfos.size > MAX_SHARED_LOOKUP_APPINFOS) { alone.push(job); continue; }
      const merged = new Set([...names, ...appinfos]);
      if (chunk.length > 0 && (chunk.length + 1) * (merged.size + 1) > MAX_LOOKUP_CELLS) {
        chunks.push(chunk);
        chunk = [];
        names = new Set(appinfos);
      } else {
        names = merged;
      }
      chunk.push(job);
    }
    if (chunk.length > 0) chunks.push(chunk);
    const planned: Job[] = [];
    const plan = (job: Job, head: number, found: Map<string, number>) => {
      try {
        job.plan = planAppend(job.stream, job.batch, head, found);
        planned.push(job);
      } catch (err) {
        job.reject(err);
      }
    };
    await Promise.all([
      ...alone.map(async (job) => {
        try {
          const { head, found } = await this.log.lookup(job.stream, job.batch.map((entry) => entry.appinfo));
          plan(job, head, found);
        } catch (err) {
          job.reject(err);
        }
      }),
      ...chunks.map(async (jobs) => {
        let results: Map<string, { head: number; found: Map<string, number> }>;
        try {
          results = await this.log.lookupMany(jobs.map((job) => job.stream), jobs.flatMap((job) => job.batch.map((entry) => entry.appinfo)));
        } catch (err) {
          for (const job of jobs) job.reject(err);
          return;
        }
        // The cartesian IN may also find other jobs' appinfos in a stream; planAppend only
        // looks up the job's own, so the extra rows are harmless.
        for (const job of jobs) {
          const result = results.get(job.stream);
          plan(job, result?.head ?? 0, result?.found ?? new Map());
        }
      }),
    ]);
    return planned;
  }

  /**
   * The rare steps before the entries: markers of buckets past the next one (written before
   * their entries so leftovers stay findable) and clearing leftovers when the seqs leave a gap.
   */
  private async prepare(job: Job): Promise<void> {
    const plan = job.plan as AppendPlan;
    if (plan.contiguous && plan.farBuckets.length === 0) return;
    job.guard();
    await Promise.all([
      plan.contiguous ? undefined : this.clearLeftovers(job.stream, plan.stored, plan.head, job.guard),
      this.log.cql.batch(plan.farBuckets.map((bucket) => ({ query: this.log.q.insertMarker, params: [job.stream, bucket] }))),
    ]);
  }

  private commitStatements(job: Job, now: number): Statement[] {
    const plan = job.plan as AppendPlan;
    const { q } = this.log;
    return [
      ...plan.toWrite.map((entry) => ({ query: q.insertAppinfo, params: [job.stream, entry.appinfo, entry.seq] })),
      // Re-written at most once per refresh period: its TTL outlasts the entries written meanwhile.
      ...plan.buckets
        .filter((bucket) => !this.markers.fresh(job.stream, bucket, now - BUCKET_MARKER_REFRESH_MS))
        .map((bucket) => ({ query: q.insertMarker, params: [job.stream, bucket] })),
      { query: q.setHead, params: [job.stream, plan.head, plan.head] },
    ];
  }

  /** Runs `step` per job; the failed ones are rejected, the rest returned. */
  private async each(jobs: Job[], step: (job: Job) => Promise<void>): Promise<Job[]> {
    const ok = await Promise.all(jobs.map(async (job) => {
      try {
        await step(job);
        return true;
      } catch (err) {
        job.reject(err);
        return false;
      }
    }));
    return jobs.filter((_, i) => ok[i]);
  }

  /**
   * One write round trip for every job: guards first (a deposed writer writes nothing more),
   * then the jobs' statements packed into batches, sent in parallel.
   */
  private async writeStage(jobs: Job[], statementsOf: (job: Job) => Statement[][]): Promise<Job[]> {
    const guarded: Job[] = [];
    const groups: { owner: Job; statements: Statement[] }[] = [];
    for (const job of jobs) {
      try {
        job.guard();
        for (const statements of statementsOf(job)) groups.push({ owner: job, statements });
        guarded.push(job);
      } catch (err) {
        job.reject(err);
      }
    }
    const failed = new Map<Job, unknown>();
    await Promise.all(packBatches(groups).map(async (batch) => {
      try {
        await this.log.cql.batch(batch.statements);
      } catch (err) {
        for (const owner of batch.owners) if (!failed.has(owner)) failed.set(owner, err);
      }
    }));
    for (const [job, err] of failed) job.reject(err);
    return guarded.filter((job) => !failed.has(job));
  }
}
