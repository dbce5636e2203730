/**
 * One append as the group commit (append-pipeline.ts) carries it through its steps — planned,
 * prepared, written — and the step runner that rejects a failed append without failing its group.
 */
import type { Entry, StoredOutcome, WriteGuard } from '@seqline/core';
import { planAppend, type AppendPlan, type StatementGroup } from './append-plan.ts';
import type { Statement } from './cql.ts';
import type { KeyLookup } from './seq-log-reader.ts';
import type { StreamState, WriterStates } from './writer-state.ts';

/**
 * Marker inserts due (their own partition) and the buckets they mark, then the entry groups
 * (one mutation each, in seq order).
 */
export interface JobWrites {
  markers: Statement[];
  marked: number[];
  entries: StatementGroup[];
}

export class AppendJob {
  state?: StreamState;
  plan?: AppendPlan;
  writes?: JobWrites;

  constructor(
    readonly stream: string,
    readonly batch: Entry[],
    readonly guard: WriteGuard,
    readonly resolve: (outcomes: StoredOutcome[]) => void,
    private readonly rejectCaller: (err: unknown) => void,
    private readonly states: WriterStates,
  ) {}

  /** A failed append's outcome is unknown: the stream is reloaded from the store next time. */
  reject(err: unknown): void {
    this.states.forget(this.stream);
    this.rejectCaller(err);
  }
}

export function settlePlan(job: AppendJob, state: StreamState, found: KeyLookup): void {
  job.state = state;
  job.plan = planAppend(job.stream, job.batch, state.head, found);
}

/**
 * Runs `step` per job; the failed ones are rejected, the rest returned. A step that finishes
 * synchronously (returns nothing) costs no promise.
 */
export async function eachJob(jobs: AppendJob[], step: (job: AppendJob) => Promise<void> | undefined): Promise<AppendJob[]> {
  const ok = jobs.map(() => true);
  const waits: Promise<void>[] = [];
  // No closure is made per job unless its step is asynchronous.
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i] as AppendJob;
    try {
      const pending = step(job);
      if (pending !== undefined) {
        waits.push(
          pending.catch((err: unknown) => {
            ok[i] = false;
            job.reject(err);
          }),
        );
      }
    } catch (err) {
      ok[i] = false;
      job.reject(err);
    }
  }
  if (waits.length > 0) await Promise.all(waits);
  return jobs.filter((_, i) => ok[i]);
}
