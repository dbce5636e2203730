/**
 * Group commit for seq-log appends: the appends of many streams that arrive while earlier ones
 * are on the wire travel together. The usual append is ONE write round trip and no read:
 *
 *   - its head and duplicates come from the writer's memory of the stream (writer-state.ts),
 *     loaded from the store on the first append of a writer term or after a failure;
 *   - each entry is written with its dedup row under one partition key (one mutation), packed
 *     with the other streams' writes into few unlogged batches.
 *
 * Rare steps come first when needed: markers of buckets past the next one, and — when the new
 * seqs leave a gap above the head — a range delete of that gap, so that a failed earlier write
 * landing late (or landed without its marker) never surfaces below seqs clients already have.
 * The streams of a group are independent: a failed batch, lookup or fencing guard fails only
 * the appends whose statements it carried, and their streams are reloaded next time.
 */
import { dedupKeyOf, type DedupKey, type Entry, type Logger, type StoredOutcome, type WriteGuard } from '@seqline/core';
import { AppendJob, eachJob, settlePlan, type JobWrites } from './append-job.ts';
import { entryGroups, packBatches, statementBytes, type AppendPlan } from './append-plan.ts';
import type { Statement } from './cql.ts';
import { BUCKET_MARKER_REFRESH_MS, BucketMarkerMemo } from './bucket-marker-memo.ts';
import { bucketOf } from './entry-codec.ts';
import type { KeyLookup, SeqLogReader } from './seq-log-reader.ts';
import { FingerprintSet } from './fingerprint-set.ts';
import {
  WriterStates,
  advance,
  fingerprint,
  mayHoldKey,
  trimWindow,
  windowBuckets,
  windowWantsMore,
  type StreamState,
  type WindowBucket,
} from './writer-state.ts';

export interface AppendPipelineOptions {
  /** Appends per group (default 64). */
  maxGroup?: number;
  /** Groups on the wire at once (default 8). */
  maxInFlight?: number;
  /** How long a written bucket marker is trusted before a write into its bucket re-writes it (default 12 h). */
  markerRefreshMs?: number;
}

export class SeqLogAppendPipeline {
  private readonly queue: AppendJob[] = [];
  private readonly maxGroup: number;
  private readonly maxInFlight: number;
  private readonly markerRefreshMs: number;
  private readonly markers = new BucketMarkerMemo();
  private readonly states = new WriterStates();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly log: SeqLogReader,
    private readonly logger: Logger,
    private readonly clearGap: (stream: string, head: number, below: number, guard: WriteGuard) => Promise<void>,
    options: AppendPipelineOptions = {},
  ) {
    this.maxGroup = options.maxGroup ?? 64;
    this.maxInFlight = options.maxInFlight ?? 8;
    this.markerRefreshMs = options.markerRefreshMs ?? BUCKET_MARKER_REFRESH_MS;
  }

  /** Appends `batch` to `stream`; the caller keeps one append per stream in flight. */
  submit(stream: string, batch: Entry[], guard: WriteGuard): Promise<StoredOutcome[]> {
    return new Promise((resolve, reject) => {
      this.queue.push(new AppendJob(stream, batch, guard, resolve, reject, this.states));
      if (this.scheduled) return;
      this.scheduled = true;
      // Appends made in the same tick start as one group.
      queueMicrotask(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxGroup);
      this.inFlight++;
      void this.run(group)
        .catch((err: unknown) => {
          this.logger.error({ err }, 'append group failed unexpectedly');
          for (const job of group) job.reject(err);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  private async run(group: AppendJob[]): Promise<void> {
    const planned = await eachJob(group, (job) => this.plan(job));
    const live: AppendJob[] = [];
    for (const job of planned) {
      const plan = job.plan as AppendPlan;
      if (plan.toWrite.length === 0) job.resolve(plan.outcomes);
      else live.push(job);
    }
    const prepared = await eachJob(live, (job) => this.prepare(job));
    const now = Date.now();
    for (const job of prepared) job.writes = this.writesOf(job, now);
    // Most appends are one partition's mutation and share batches; a longer one goes alone, in order.
    const shared = prepared.filter((job) => (job.writes?.entries.length ?? 0) <= 1);
    const alone = prepared.filter((job) => (job.writes?.entries.length ?? 0) > 1);
    const written = [
      ...(await this.writeShared(shared)),
      ...(await eachJob(alone, async (job) => {
        const { markers, entries } = job.writes as JobWrites;
        for (const statements of [markers, ...entries.map((group) => group.statements)]) {
          job.guard();
          await this.log.cql.batch(statements, true, this.log.cql.clockTimestamp());
        }
      })),
    ];
    for (const job of written) {
      const plan = job.plan as AppendPlan;
      // Only the markers written now: the memo must never vouch for a marker older than the
      // refresh period, or a stream busy for longer than the marker's TTL would outlive it.
      for (const bucket of plan.farBuckets) this.markers.wrote(job.stream, bucket, now);
      for (const bucket of (job.writes as JobWrites).marked) this.markers.wrote(job.stream, bucket, now);
      this.states.remember(job.stream, advance(job.state as StreamState, plan.toWrite));
      job.resolve(plan.outcomes);
    }
  }

  /**
   * Head and duplicates of the job's appinfos, from memory when the writer holds the stream —
   * then synchronously (no promise per append), which is the usual case.
   */
  private plan(job: AppendJob): Promise<void> | undefined {
    const held = this.states.get(job.stream, job.guard.term);
    return held === undefined ? this.load(job.stream, job.guard.term).then((state) => this.planWith(job, state)) : this.planWith(job, held);
  }

  private planWith(job: AppendJob, state: StreamState): Promise<void> | undefined {
    // A held fingerprint is only a candidate: a resend (rare) is confirmed by the store, which
    // checks each index row against its entry (a row can outlive its entry, or be the previous
    // layout's, keyed by plain appinfo: its fingerprint is held too).
    let asked: DedupKey[] | undefined;
    for (const entry of job.batch) {
      const key = dedupKeyOf(entry);
      if (asked?.includes(key) !== true && mayHoldKey(state, key, entry.appinfo)) (asked ??= []).push(key);
    }
    if (asked !== undefined)
      return this.log.lookupKeys(job.stream, windowBuckets(state), asked).then((found) => settlePlan(job, state, found));
    settlePlan(job, state, NOTHING_FOUND);
    return undefined;
  }

  private async load(stream: string, term: string | undefined): Promise<StreamState> {
    // Two buckets at a time: a dense stream's window is its last two, a sparse one reads on.
    let filled = await this.log.lastFilled(stream, 2);
    const head = filled[0]?.top ?? 0;
    const window: WindowBucket[] = [];
    for (;;) {
      window.push(...(await Promise.all(filled.map(({ bucket }) => this.loadBucket(stream, bucket)))));
      const oldest = filled.at(-1);
      if (filled.length < 2 || oldest === undefined || !windowWantsMore(window)) break;
      filled = await this.log.lastFilled(stream, 2, oldest.bucket);
    }
    return { term, head, window: trimWindow(window) };
  }

  private async loadBucket(stream: string, bucket: number): Promise<WindowBucket> {
    const fingerprints = new FingerprintSet();
    await this.log.eachIndexedKey(stream, bucket, (keys) => {
      for (const k of keys) fingerprints.add(fingerprint(k));
    });
    return { bucket, fingerprints };
  }

  /**
   * Rare steps before the entries: far markers, clearing a gap outside the first entry's
   * partition, and re-keying a previous-layout dedup row an entry's row would overwrite.
   */
  private prepare(job: AppendJob): Promise<void> | undefined {
    const plan = job.plan as AppendPlan;
    const gap = gapBelow(plan);
    if (gap === undefined && plan.farBuckets.length === 0 && plan.rekeys.length === 0) return undefined;
    job.guard();
    const timestamp = this.log.cql.clockTimestamp();
    return Promise.all([
      gap === undefined || gap.inline ? undefined : this.clearGap(job.stream, plan.stored, gap.below, job.guard),
      this.log.cql.batch(
        [
          ...plan.farBuckets.map((bucket) => ({ query: this.log.q.insertMarker, params: [job.stream, bucket] })),
          ...plan.rekeys.map(({ bucket, key, seq }) => ({ query: this.log.q.insertAppinfo, params: [job.stream, bucket, key, seq] })),
        ],
        true,
        timestamp,
      ),
    ]).then(() => undefined);
  }

  /** The job's writes: the markers due, then its entries with their dedup rows. */
  private writesOf(job: AppendJob, now: number): JobWrites {
    const plan = job.plan as AppendPlan;
    // Re-written at most once per refresh period: its TTL outlasts the entries written meanwhile.
    // The usual append has none due: no arrays are made for it.
    let marked: number[] = NO_BUCKETS;
    let markers: Statement[] = NO_STATEMENTS;
    for (const bucket of plan.buckets) {
      if (plan.farBuckets.includes(bucket) || this.markers.fresh(job.stream, bucket, now - this.markerRefreshMs)) continue;
      if (marked === NO_BUCKETS) [marked, markers] = [[], []];
      marked.push(bucket);
      markers.push({ query: this.log.q.insertMarker, params: [job.stream, bucket] });
    }
    const entries = entryGroups(job.stream, plan.toWrite, this.log.q);
    const gap = gapBelow(plan);
    // A gap inside the first entry's partition is cleared in the same mutation as the entries:
    // no extra round trip (the first append of every stream after a takeover has one).
    const first = entries[0];
    if (gap?.inline === true && first !== undefined) {
      const clear = { query: this.log.q.deleteRange, params: [job.stream, bucketOf(gap.below), plan.stored, gap.below] };
      first.statements.unshift(clear);
      first.bytes += statementBytes(clear);
    }
    return { markers, marked, entries };
  }

  /**
   * One write round trip for every job: guards first (a deposed writer writes nothing more),
   * then the jobs' groups packed into batches, sent in parallel.
   */
  private async writeShared(jobs: AppendJob[]): Promise<AppendJob[]> {
    const guarded: AppendJob[] = [];
    const groups: { owner: AppendJob; statements: Statement[]; bytes?: number }[] = [];
    for (const job of jobs) {
      try {
        job.guard();
        const { markers, entries } = job.writes as JobWrites;
        if (markers.length > 0) groups.push({ owner: job, statements: markers });
        for (const group of entries) groups.push({ owner: job, statements: group.statements, bytes: group.bytes });
        guarded.push(job);
      } catch (err) {
        job.reject(err);
      }
    }
    // Taken right after the guards: see Cql.clockTimestamp.
    const timestamp = this.log.cql.clockTimestamp();
    const failed = new Map<AppendJob, unknown>();
    await Promise.all(
      packBatches(groups).map(async (batch) => {
        try {
          await this.log.cql.batch(batch.statements, true, timestamp);
        } catch (err) {
          for (const owner of batch.owners) if (!failed.has(owner)) failed.set(owner, err);
        }
      }),
    );
    for (const [job, err] of failed) job.reject(err);
    return guarded.filter((job) => !failed.has(job));
  }
}

const NOTHING_FOUND: KeyLookup = { found: new Map(), displaced: new Map() };
// Shared by every append that has no marker due; frozen, so a write to one would throw.
const NO_BUCKETS: number[] = Object.freeze([]) as unknown as number[];
const NO_STATEMENTS: Statement[] = Object.freeze([]) as unknown as Statement[];

/**
 * Seqs between the head and the first new one were burnt (see CqlSeqLog.clearGap); `inline`
 * when they all lie in the first new entry's bucket.
 */
function gapBelow(plan: AppendPlan): { below: number; inline: boolean } | undefined {
  const first = plan.toWrite[0]?.seq;
  if (first === undefined || first <= plan.stored + 1) return undefined;
  return { below: first, inline: bucketOf(plan.stored + 1) === bucketOf(first) };
}
