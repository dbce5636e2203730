/**
 * The peers bench's scale and choices, from environment variables like every other bench's knobs
 * (docs/benchmarks.md). `BENCH_PEERS_SCALE=smoke` shrinks every step to prove the bench runs end
 * to end in a few minutes; each variable below overrides one value of the chosen scale.
 */

export const SYSTEM_KEYS = ['centrifugo-redis', 'centrifugo-memory', 'seqline-embedded', 'seqline-distributed'] as const;
export type SystemKey = (typeof SYSTEM_KEYS)[number];
export type StepKey = 'idle' | 'rates' | 'catchup' | 'groups';
/** Idle first: on a fresh server, as bench/connections.ts measures, before other steps grow the heaps. */
const STEP_KEYS: readonly StepKey[] = ['idle', 'rates', 'catchup', 'groups'];

export interface PeersOptions {
  scale: 'full' | 'smoke';
  systems: SystemKey[];
  steps: StepKey[];
  /** Sender → recipient pairs of the 1:1 steps (2 sockets each). */
  pairs: number;
  /** Offered rates (msg/s) whose p50/p99 the table reports; the first also gives CPU per message. */
  fixedRates: number[];
  /** Rates tried in ascending order for the highest one with p99 under the limit. */
  ladder: number[];
  /** Bisections between the last rate that held and the first that did not. */
  refine: number;
  /** Further tries of a rate that did not hold before it counts as not holding. */
  retries: number;
  p99LimitMs: number;
  warmupMs: number;
  measureMs: number;
  /** How long the measured messages of a rate may still arrive after the last was sent. */
  drainMs: number;
  catchUp: number;
  catchUpRepeats: number;
  groupSizes: number[];
  groupRepeats: number;
  idleSockets: number;
  /** Redis `appendfsync` of Centrifugo's Redis: `everysec` (Redis's default with AOF) or `always`. */
  redisFsync: 'everysec' | 'always';
  /** Keyspace of Seqline distributed (migrated on first use), apart from other benches and tests. */
  keyspace: string;
}

const FULL: Omit<PeersOptions, 'systems' | 'steps' | 'redisFsync' | 'keyspace'> = {
  scale: 'full',
  pairs: 200,
  fixedRates: [1000, 2000, 4000],
  ladder: [500, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000, 16000],
  refine: 1,
  retries: 1,
  p99LimitMs: 25,
  warmupMs: 2000,
  measureMs: 10_000,
  drainMs: 5000,
  catchUp: 10_000,
  catchUpRepeats: 3,
  groupSizes: [1000, 10_000],
  groupRepeats: 5,
  idleSockets: 10_000,
};

const SMOKE: typeof FULL = {
  scale: 'smoke',
  pairs: 40,
  fixedRates: [200, 500],
  ladder: [250, 500, 1000, 2000],
  refine: 0,
  retries: 1,
  p99LimitMs: 25,
  warmupMs: 1000,
  measureMs: 3000,
  drainMs: 3000,
  catchUp: 2000,
  catchUpRepeats: 2,
  groupSizes: [100, 1000],
  groupRepeats: 2,
  idleSockets: 1000,
};

function numbers(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.some((v) => !Number.isFinite(v) || v <= 0))
    throw new Error(`${name}: expected positive numbers separated by commas, got "${raw}"`);
  return values;
}

function number(name: string, fallback: number): number {
  const [value] = numbers(name, [fallback]);
  return value ?? fallback;
}

function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: readonly T[]): T[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const values = raw.split(',').map((s) => s.trim());
  const unknown = values.filter((v) => !(allowed as readonly string[]).includes(v));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')}; choose from ${allowed.join(', ')}`);
  return values as T[];
}

export function peersOptions(): PeersOptions {
  const base = process.env['BENCH_PEERS_SCALE'] === 'smoke' ? SMOKE : FULL;
  const fsync = process.env['BENCH_PEERS_REDIS_FSYNC'] ?? 'everysec';
  if (fsync !== 'everysec' && fsync !== 'always') throw new Error(`BENCH_PEERS_REDIS_FSYNC: everysec or always, got "${fsync}"`);
  return {
    ...base,
    systems: oneOf('BENCH_PEERS_SYSTEMS', SYSTEM_KEYS, SYSTEM_KEYS),
    steps: oneOf('BENCH_PEERS_STEPS', STEP_KEYS, STEP_KEYS),
    pairs: number('BENCH_PEERS_PAIRS', base.pairs),
    fixedRates: numbers('BENCH_PEERS_RATES', base.fixedRates),
    ladder: numbers('BENCH_PEERS_LADDER', base.ladder).sort((a, b) => a - b),
    refine: Math.floor(Number(process.env['BENCH_PEERS_REFINE'] ?? base.refine)),
    retries: Math.floor(Number(process.env['BENCH_PEERS_RETRIES'] ?? base.retries)),
    warmupMs: number('BENCH_PEERS_WARMUP_MS', base.warmupMs),
    measureMs: number('BENCH_PEERS_MEASURE_MS', base.measureMs),
    catchUp: number('BENCH_PEERS_CATCHUP', base.catchUp),
    groupSizes: numbers('BENCH_PEERS_GROUPS', base.groupSizes),
    idleSockets: number('BENCH_PEERS_IDLE', base.idleSockets),
    redisFsync: fsync,
    keyspace: process.env['BENCH_PEERS_KEYSPACE'] ?? 'seqline_peers',
  };
}
