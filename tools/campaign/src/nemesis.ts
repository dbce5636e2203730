/**
 * The nemesis: a round's faults, drawn from its seed as (after how many acknowledged messages,
 * which fault, a random parameter), fired as the round reaches them — by progress, not by the
 * clock, so a replay injects the same faults at the same point of the workload. Faults run
 * concurrently and may overlap; a fault whose target is busy with another is skipped (and
 * counted). Every fault is written to the history with its start and end.
 */
import { now, type HistoryWriter } from './history.ts';
import type { Rng } from './rng.ts';

export type FaultKind =
  | 'kill9'
  | 'kill9-rebuild'
  | 'kill9-fanout'
  | 'kill9-gateway'
  | 'sigstop'
  | 'rolling-restart'
  | 'clock-jump'
  | 'outage30'
  | 'redis-flushall'
  | 'redis-restart'
  | 'redis-rollback'
  | 'nats-restart'
  | 'nats-rollback'
  | 'cassandra-restart';

export interface PlannedFault {
  atAck: number;
  kind: FaultKind;
  /** Uniform in [0, 1): the fault's own random choice (down time, target…). */
  r: number;
}

export const EMBEDDED_FAULTS: Partial<Record<FaultKind, number>> = { kill9: 4, 'kill9-rebuild': 2, 'kill9-fanout': 2, 'clock-jump': 1 };
export const PROCESS_FAULTS: Partial<Record<FaultKind, number>> = {
  kill9: 3,
  'kill9-gateway': 2,
  'kill9-fanout': 1,
  sigstop: 2,
  'rolling-restart': 1,
  'clock-jump': 1,
};
/** Added with `--service-faults`, weighted so that about half the faults of a round are these. */
export const SERVICE_FAULTS: Partial<Record<FaultKind, number>> = {
  'redis-flushall': 2,
  'redis-restart': 2,
  'redis-rollback': 2,
  'nats-restart': 2,
  'nats-rollback': 2,
};
/** Added with `--own-cassandra` (the round's Cassandra is a private node: it may be restarted). */
export const CASSANDRA_FAULTS: Partial<Record<FaultKind, number>> = { 'cassandra-restart': 2 };

/** About one fault per 800 messages (at least 2), between 5 % and 85 % of the round; sometimes a 30-minute outage. */
export function planFaults(rng: Rng, messages: number, weights: Partial<Record<FaultKind, number>>, outageChance: number): PlannedFault[] {
  const count = Object.keys(weights).length === 0 ? 0 : Math.max(2, Math.round(messages / 800));
  const plan: PlannedFault[] = [];
  for (let i = 0; i < count; i++) {
    plan.push({
      atAck: Math.floor(messages * (0.05 + 0.8 * rng.next())),
      kind: rng.weighted(weights as Record<FaultKind, number>),
      r: rng.next(),
    });
  }
  if (rng.chance(outageChance)) plan.push({ atAck: Math.floor(messages * (0.2 + 0.5 * rng.next())), kind: 'outage30', r: rng.next() });
  return plan.sort((a, b) => a.atAck - b.atAck);
}

/** What a fault did, for the history: its target, the shards it held, a note. */
export interface FaultOutcome {
  target: string;
  shards?: number[];
  detail?: string;
  /** A restarted service: when it was down (what it acknowledged before was the old instance's). */
  stopped?: number;
}

/** The system's faults: each resolves when the fault is over (the process back, the service up). */
export type FaultActions = Record<FaultKind, ((r: number) => Promise<FaultOutcome | null>) | undefined>;

export class Nemesis {
  private acks = 0;
  private next = 0;
  private readonly running = new Set<Promise<void>>();
  private armed: PlannedFault[] = [];
  private stopped = false;
  readonly injected = new Map<string, number>();
  readonly skipped = new Map<string, number>();
  readonly failed: string[] = [];
  /** Faults injected so far, with their start (history clock). */
  readonly done: { kind: FaultKind; at: number; stopped?: number }[] = [];

  constructor(
    private readonly plan: PlannedFault[],
    private readonly actions: FaultActions,
    private readonly history: HistoryWriter,
  ) {}

  /** An acknowledged send; `group`: to a write-fanout group of several members (a fanout follows). */
  onAck(fanout: boolean): void {
    if (this.stopped) return;
    this.acks++;
    if (fanout && this.armed.length > 0) for (const f of this.armed.splice(0)) this.fire(f);
    while (this.next < this.plan.length && (this.plan[this.next] as PlannedFault).atAck <= this.acks) {
      const f = this.plan[this.next++] as PlannedFault;
      // Armed: fired by the next acknowledged send to a fanout group, so a fanout job is pending.
      if (f.kind === 'kill9-fanout' || f.kind === 'outage30') this.armed.push(f);
      else this.fire(f);
    }
  }

  private fire(f: PlannedFault): void {
    const action = this.actions[f.kind];
    if (!action) return;
    const at = now();
    const task = action(f.r)
      .then((outcome) => {
        if (outcome === null) {
          this.skipped.set(f.kind, (this.skipped.get(f.kind) ?? 0) + 1);
          return;
        }
        this.injected.set(f.kind, (this.injected.get(f.kind) ?? 0) + 1);
        this.done.push({ kind: f.kind, at, ...(outcome.stopped === undefined ? {} : { stopped: outcome.stopped }) });
        this.history.write({ t: 'fault', kind: f.kind, at, end: now(), ...outcome });
      })
      .catch((err: unknown) => {
        this.failed.push(`${f.kind}: ${err instanceof Error ? err.message : String(err)}`);
        this.history.write({ t: 'fault', kind: f.kind, at, end: now(), target: 'failed', detail: String(err).slice(0, 300) });
      });
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  /** No new faults; resolves when every running one is over. */
  async drain(): Promise<void> {
    this.stopped = true;
    this.armed = [];
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
