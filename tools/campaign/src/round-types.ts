/** What a round is told (RoundOptions) and what it hands back (RoundResult); runRound (round.ts) runs it. */
import type { SettleResult } from './settle.ts';
import type { Mode } from './system.ts';

export interface RoundOptions {
  round: number;
  seed: number;
  mode: Mode;
  messages: number;
  serviceFaults: boolean;
  /** Distributed rounds run on a Cassandra node of their own, which the nemesis may restart. */
  ownCassandra: boolean;
  /** Only these kinds of fault (of those the mode and `serviceFaults` allow); all when unset. */
  onlyFaults?: string[];
  outDir: string;
  /** The traffic phase stops here even if the budget is not spent (the round is marked truncated). */
  trafficLimitMs: number;
  /**
   * The traffic phase stops, and the round is marked stalled, when no message was acknowledged
   * for this long while the budget was not spent: the system stopped taking sends.
   */
  stallMs: number;
  workers: number;
  gateways: number;
  notifyWindowMs: number;
  /** Chance of a 30-minute outage in this round. */
  outageChance: number;
  /** Share of hook calls the receiver answers with a 500 while traffic runs. */
  hookFailRate: number;
  log: (line: string) => void;
}

export interface RoundResult {
  file: string;
  /** Directories the round left beside its history (private services' data, their snapshots). */
  dirs: string[];
  seedHex: string;
  mode: Mode;
  acked: number;
  taken: number;
  injected: Map<string, number>;
  skipped: Map<string, number>;
  nemesisFailures: string[];
  errors: Map<string, number>;
  trafficMs: number;
  totalMs: number;
  truncated: boolean;
  /** No message was acknowledged for `stallMs` (the traffic phase ended there). */
  stalled: boolean;
  settle: SettleResult;
}
