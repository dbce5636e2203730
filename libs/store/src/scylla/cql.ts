/**
 * The one way the CQL stores talk to the cluster: every statement is prepared, table names are
 * qualified with the keyspace, and each call picks the right consistency and retry safety.
 *
 * Write discipline (Cassandra: mixing lightweight transactions and plain writes on one table
 * breaks LWT linearizability): a table is either written only through `lwt`/`lwtBatch` or only
 * through `write`/`batch`. schema/README.md lists which table is which.
 */
import { errors, types, type Client } from 'cassandra-driver';
import { OverloadedError, systemClock, type Clock } from '@seqline/core';

export type Row = types.Row;
export type Params = unknown[];
export interface Statement {
  query: string;
  params: Params;
}

export interface CqlConsistency {
  /** Plain reads and writes, and the commit phase of LWTs. Default LOCAL_QUORUM. */
  consistency: types.consistencies;
  /** Paxos phase of LWTs and linearizable reads. Default SERIAL. */
  serialConsistency: types.consistencies;
}

export const DEFAULT_CONSISTENCY: CqlConsistency = {
  consistency: types.consistencies.localQuorum,
  serialConsistency: types.consistencies.serial,
};

const KEYSPACE_NAME = /^[A-Za-z][A-Za-z0-9_]{0,47}$/;

export function checkKeyspaceName(keyspace: string): string {
  if (!KEYSPACE_NAME.test(keyspace)) throw new Error(`invalid keyspace name ${JSON.stringify(keyspace)}`);
  return keyspace;
}

export class Cql {
  private lastClockTimestamp = 0;

  constructor(
    readonly client: Client,
    readonly keyspace: string,
    private readonly levels: CqlConsistency = DEFAULT_CONSISTENCY,
    /** The wall clock of clockTimestamp (tests inject one that jumps). */
    private readonly clock: Clock = systemClock,
  ) {
    checkKeyspaceName(keyspace);
  }

  /**
   * A write timestamp from this process's wall clock (µs since the epoch), strictly increasing
   * per Cql. Only the seq log takes these: its cells are written once (an entry, its dedup row,
   * a bucket marker re-written with the same value), and its time-window compaction and TTL
   * drops need timestamps that are real times. Rows that are overwritten — the conversation
   * index — take theirs from seqs instead (core's seqWriteTimestamp). The seq log takes it right
   * after its write guard, in the same synchronous step: a writer paused after the guard then
   * writes with a timestamp older than its successor's gap delete (schema/README.md, "Gaps").
   */
  clockTimestamp(): number {
    this.lastClockTimestamp = Math.max(this.clock.now() * 1000, this.lastClockTimestamp + 1);
    return this.lastClockTimestamp;
  }

  /** `keyspace.table`, for building statements. */
  table(name: string): string {
    return `${this.keyspace}.${name}`;
  }

  /** A read at the plain consistency; reads are idempotent, so the driver may retry them. */
  async read(query: string, params: Params, options: { fetchSize?: number; pageState?: string } = {}): Promise<types.ResultSet> {
    try {
      return await this.client.execute(query, params, {
        prepare: true,
        isIdempotent: true,
        consistency: this.levels.consistency,
        ...options,
      });
    } catch (err) {
      throw storeError(err);
    }
  }

  /**
   * All rows of a read, following pages. Every read that can return more than a handful of
   * rows goes through here: a LIMIT above the fetch size still comes back one page at a time.
   */
  async readAll(query: string, params: Params, options: { serial?: boolean; fetchSize?: number } = {}): Promise<Row[]> {
    const rows: Row[] = [];
    const consistency = options.serial === true ? this.levels.serialConsistency : this.levels.consistency;
    const fetchSize = options.fetchSize ?? 1000;
    let pageState: string | undefined;
    try {
      do {
        const result = await this.client.execute(query, params, {
          prepare: true,
          isIdempotent: true,
          consistency,
          fetchSize,
          ...(pageState === undefined ? {} : { pageState }),
        });
        rows.push(...result.rows);
        pageState = result.pageState ?? undefined;
      } while (pageState !== undefined && pageState !== null);
    } catch (err) {
      throw storeError(err);
    }
    return rows;
  }

  /** A linearizable read (Paxos): sees every committed and in-progress LWT of the partition. */
  async serialRead(query: string, params: Params): Promise<types.ResultSet> {
    return this.client.execute(query, params, {
      prepare: true,
      isIdempotent: true,
      consistency: this.levels.serialConsistency,
    });
  }

  /**
   * A plain write. Idempotent unless told otherwise (fixed values, set additions, deletes).
   * `timestamp` (µs, see clockTimestamp) replaces the one the driver would take when it builds
   * the request; a statement's own `USING TIMESTAMP` overrides both.
   */
  async write(query: string, params: Params, idempotent = true, timestamp?: number): Promise<void> {
    try {
      await this.client.execute(query, params, {
        prepare: true,
        isIdempotent: idempotent,
        consistency: this.levels.consistency,
        ...(timestamp === undefined ? {} : { timestamp }),
      });
    } catch (err) {
      throw storeError(err);
    }
  }

  /** An unlogged batch: atomic and isolated when all statements share one partition key. */
  async batch(statements: Statement[], idempotent = true, timestamp?: number): Promise<void> {
    if (statements.length === 0) return;
    if (statements.length === 1) {
      const [only] = statements as [Statement];
      await this.write(only.query, only.params, idempotent, timestamp);
      return;
    }
    try {
      await this.client.batch(statements, {
        prepare: true,
        logged: false,
        isIdempotent: idempotent,
        consistency: this.levels.consistency,
        ...(timestamp === undefined ? {} : { timestamp }),
      });
    } catch (err) {
      throw storeError(err);
    }
  }

  /** One lightweight transaction. Never retried by the driver: the outcome of a timeout is unknown. */
  async lwt(query: string, params: Params): Promise<types.ResultSet> {
    return this.client.execute(query, params, {
      prepare: true,
      isIdempotent: false,
      consistency: this.levels.consistency,
      serialConsistency: this.levels.serialConsistency,
    });
  }

  /** A conditional batch (one table, one partition): all statements apply iff all conditions hold. */
  async lwtBatch(statements: Statement[]): Promise<types.ResultSet> {
    return this.client.batch(statements, {
      prepare: true,
      logged: true,
      isIdempotent: false,
      consistency: this.levels.consistency,
      serialConsistency: this.levels.serialConsistency,
    });
  }
}

/** Response codes of a node that is there but cannot serve now (unavailable, overloaded, bootstrapping, timed out). */
const TRANSIENT_RESPONSE_CODES: ReadonlySet<number> = new Set([
  types.responseErrorCodes.unavailableException,
  types.responseErrorCodes.overloaded,
  types.responseErrorCodes.isBootstrapping,
  types.responseErrorCodes.writeTimeout,
  types.responseErrorCodes.readTimeout,
]);

/**
 * The error a plain read or write throws: storage that is unreachable or too slow right now is
 * OVERLOADED (the client retries, and every plain write here is idempotent), not INTERNAL.
 * Anything else (a bad query, a schema mismatch) passes through unchanged. LWTs are not mapped:
 * their callers tell an unknown outcome apart (isUnknownOutcome).
 */
export function storeError(err: unknown): unknown {
  const transient =
    err instanceof errors.NoHostAvailableError ||
    err instanceof errors.OperationTimedOutError ||
    err instanceof errors.BusyConnectionError ||
    (err instanceof errors.ResponseError && TRANSIENT_RESPONSE_CODES.has(err.code));
  return transient ? new OverloadedError(`storage unavailable, retry later (${(err as Error).name})`, { cause: err }) : err;
}

/**
 * True when an LWT may or may not have been applied (a timeout after the request was sent):
 * callers re-read serially to learn the outcome instead of assuming either.
 */
export function isUnknownOutcome(err: unknown): boolean {
  if (err instanceof errors.OperationTimedOutError) return true;
  if (err instanceof errors.ResponseError) {
    const timeouts: number[] = [types.responseErrorCodes.writeTimeout, types.responseErrorCodes.readTimeout];
    return timeouts.includes(err.code);
  }
  return false;
}

/** A JS number from a bigint/int/counter column (all our numbers are safe integers). */
export function num(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value instanceof types.Long) return value.toNumber();
  if (typeof value === 'bigint') return Number(value);
  throw new TypeError(`not a number column value: ${String(value)}`);
}

/** Like num, but null/undefined stay undefined (an unset column). */
export function optNum(value: unknown): number | undefined {
  return value === null || value === undefined ? undefined : num(value);
}

export function optStr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function str(value: unknown, column: string): string {
  if (typeof value !== 'string') throw new TypeError(`column ${column} is not text`);
  return value;
}

export function newOp(): types.Uuid {
  return types.Uuid.random();
}

export function sameOp(value: unknown, op: types.Uuid): boolean {
  return value instanceof types.Uuid && value.equals(op);
}

/** Splits a list into chunks of at most `size` (IN lists, batches). */
export function chunks<T>(values: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

/**
 * Runs `fn` over `values` with at most `limit` calls in flight; results keep input order. After
 * a call fails no new one starts, and the first failure is thrown only once the calls in flight
 * have settled: nothing of it is still running (writing) when the caller hears of it.
 */
export async function mapLimit<T, R>(values: readonly T[], limit: number, fn: (value: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(values.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < values.length && failure === undefined) {
      const i = next++;
      try {
        results[i] = await fn(values[i] as T);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, values.length) }, worker));
  if (failure !== undefined) throw failure.err;
  return results;
}

/** A timestamp of core's seq layout as a bind value of `USING TIMESTAMP ?` (it can exceed 2^53). */
export function timestampParam(at: bigint): types.Long {
  return types.Long.fromString(at.toString());
}

/** A bigint column or WRITETIME as an exact bigint; null/undefined stay undefined. */
export function optBigint(value: unknown): bigint | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof types.Long) return BigInt(value.toString(10));
  if (typeof value === 'number' || typeof value === 'bigint') return BigInt(value);
  throw new TypeError(`not a bigint column value (${typeof value})`);
}
