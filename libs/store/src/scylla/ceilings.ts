/**
 * Seq section ceilings and owner epochs on CQL (`seq_ceiling`, `seq_epoch`). Both tables are
 * written only by lightweight transactions: each operation is a compare-and-set loop on the
 * full row (read serially, compute, `IF ceiling = ? AND epoch = ?`), so a deposed owner is
 * fenced by Paxos, not by clocks. Inside one process the loops of one key run one at a time.
 * A clean release is recorded in the epoch row (`released`, `released_at`) `IF epoch = ?`, so
 * the next draw reads it in the same linearizable history as the epoch it replaces.
 */
import {
  KeyedQueue,
  FencedError,
  InternalError,
  type DrawnEpoch,
  type EpochRecord,
  type CeilingClaim,
  type CeilingRaise,
  type SeqCeilingStore,
} from '@seqline/core';
import { isUnknownOutcome, newOp, optNum, sameOp, type Cql, type Row } from './cql.ts';

interface EpochRow {
  epoch: number | undefined;
  op: unknown;
  released: { epoch: number; atMs: number } | undefined;
}

interface CeilingState {
  ceiling: number;
  epoch: number;
}

const MAX_ATTEMPTS = 50;

export class CqlSeqCeilingStore implements SeqCeilingStore {
  private readonly serial = new KeyedQueue();
  private readonly q: Record<
    'readEpoch' | 'insertEpoch' | 'bumpEpoch' | 'recordRelease' | 'readCeiling' | 'insertCeiling' | 'casCeiling',
    string
  >;

  constructor(private readonly cql: Cql) {
    const epochs = cql.table('seq_epoch');
    const ceilings = cql.table('seq_ceiling');
    this.q = {
      readEpoch: `SELECT epoch, op, released, released_at FROM ${epochs} WHERE scope = ?`,
      insertEpoch: `INSERT INTO ${epochs} (scope, epoch, op) VALUES (?, ?, ?) IF NOT EXISTS`,
      bumpEpoch: `UPDATE ${epochs} SET epoch = ?, op = ? WHERE scope = ? IF epoch = ?`,
      recordRelease: `UPDATE ${epochs} SET released = ?, released_at = ? WHERE scope = ? IF epoch = ?`,
      readCeiling: `SELECT ceiling, epoch FROM ${ceilings} WHERE section = ?`,
      insertCeiling: `INSERT INTO ${ceilings} (section, ceiling, epoch) VALUES (?, ?, ?) IF NOT EXISTS`,
      casCeiling: `UPDATE ${ceilings} SET ceiling = ?, epoch = ? WHERE section = ? IF ceiling = ? AND epoch = ?`,
    };
  }

  nextEpoch(scope: string): Promise<number> {
    return this.drawEpoch({ scope }).then((drawn) => drawn.epoch);
  }

  /**
   * After a timeout the row's `op` tells whether the epoch drawn is ours (never returned twice).
   * The record returned is the row the applied compare-and-set replaced: read serially before
   * it, with `IF epoch = <read>` holding, and a release of that epoch once set is never unset
   * while the epoch stands, so a release seen in the read was still there when the draw applied.
   */
  drawEpoch({ scope }: { scope: string }): Promise<DrawnEpoch> {
    return this.serial.run(`epoch:${scope}`, async () => {
      let row = await this.readEpoch(scope);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = row.epoch;
        const next = (current ?? 0) + 1;
        const op = newOp();
        const drawn: DrawnEpoch = { epoch: next, before: recordOf(row) };
        try {
          const result =
            current === undefined
              ? await this.cql.lwt(this.q.insertEpoch, [scope, next, op])
              : await this.cql.lwt(this.q.bumpEpoch, [next, op, scope, current]);
          if (result.wasApplied()) return drawn;
          // Lost the round: the whole row again (a refused CAS returns only the compared column).
          row = await this.readEpoch(scope);
        } catch (err) {
          if (!isUnknownOutcome(err)) throw err;
          row = await this.readEpoch(scope);
          if (row.epoch === next && sameOp(row.op, op)) return drawn;
        }
        await contentionPause(attempt);
      }
      throw new InternalError(`nextEpoch(${scope}): gave up after ${MAX_ATTEMPTS} contended attempts`);
    });
  }

  /** Idempotent: a retry after an unknown outcome sets the same values under the same condition. */
  async recordRelease({ scope, epoch, atMs }: { scope: string; epoch: number; atMs: number }): Promise<boolean> {
    checkNumber('epoch', epoch);
    checkNumber('release time', atMs);
    return this.serial.run(`epoch:${scope}`, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        try {
          return (await this.cql.lwt(this.q.recordRelease, [epoch, atMs, scope, epoch])).wasApplied();
        } catch (err) {
          if (!isUnknownOutcome(err)) throw err;
          const stored = await this.readEpoch(scope);
          if (stored.epoch !== epoch) return false;
          if (stored.released?.epoch === epoch && stored.released.atMs === atMs) return true;
        }
        await contentionPause(attempt);
      }
      throw new InternalError(`recordRelease(${scope}): gave up after ${MAX_ATTEMPTS} attempts`);
    });
  }

  async claim({ section, epoch }: CeilingClaim): Promise<number> {
    checkNumber('epoch', epoch);
    const before = await this.mutate(section, (stored) => {
      if (epoch < stored.epoch) throw new FencedError(`section ${section} is owned by epoch ${stored.epoch}, claim with ${epoch}`);
      return epoch > stored.epoch ? { ceiling: stored.ceiling, epoch } : null;
    });
    return before.ceiling;
  }

  /** Never lowers a ceiling: raises that arrive out of order keep the highest value. */
  async raise({ section, ceiling, epoch }: CeilingRaise): Promise<void> {
    checkNumber('epoch', epoch);
    checkNumber('ceiling', ceiling);
    await this.mutate(section, (stored) => {
      if (epoch < stored.epoch) throw new FencedError(`section ${section} is owned by epoch ${stored.epoch}, raise with ${epoch}`);
      if (epoch > stored.epoch || ceiling > stored.ceiling) return { ceiling: Math.max(ceiling, stored.ceiling), epoch };
      return null;
    });
  }

  /**
   * Applies `change` to the section's state with a compare-and-set on the whole row; returns
   * the state the applied change (or the no-op decision) was based on. After a timeout the
   * state is re-read serially (which also completes a half-done Paxos round) and re-decided.
   */
  private mutate(section: string, change: (stored: CeilingState) => CeilingState | null): Promise<CeilingState> {
    return this.serial.run(`ceiling:${section}`, async () => {
      let stored = await this.readCeiling(section);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = stored ?? { ceiling: 0, epoch: 0 };
        const next = change(current);
        if (next === null) return current;
        try {
          const result =
            stored === undefined
              ? await this.cql.lwt(this.q.insertCeiling, [section, next.ceiling, next.epoch])
              : await this.cql.lwt(this.q.casCeiling, [next.ceiling, next.epoch, section, stored.ceiling, stored.epoch]);
          if (result.wasApplied()) return current;
          stored = ceilingOf(result.first());
        } catch (err) {
          if (!isUnknownOutcome(err)) throw err;
          stored = await this.readCeiling(section);
        }
        await contentionPause(attempt);
      }
      throw new InternalError(`ceiling of ${section}: gave up after ${MAX_ATTEMPTS} contended attempts`);
    });
  }

  private async readEpoch(scope: string): Promise<EpochRow> {
    const row = (await this.cql.serialRead(this.q.readEpoch, [scope])).first();
    const released = optNum(row?.get('released'));
    const atMs = optNum(row?.get('released_at'));
    return {
      epoch: optNum(row?.get('epoch')),
      op: row?.get('op'),
      released: released === undefined || atMs === undefined ? undefined : { epoch: released, atMs },
    };
  }

  private async readCeiling(section: string): Promise<CeilingState | undefined> {
    return ceilingOf((await this.cql.serialRead(this.q.readCeiling, [section])).first());
  }
}

/** The handover record of an epoch row; undefined when no epoch was drawn yet. */
function recordOf(row: EpochRow): EpochRecord | undefined {
  if (row.epoch === undefined) return undefined;
  return row.released === undefined ? { epoch: row.epoch } : { epoch: row.epoch, released: row.released };
}

/** The row a read or a refused CAS returned; undefined when the section has no row yet. */
function ceilingOf(row: Row | null | undefined): CeilingState | undefined {
  const ceiling = optNum(row?.get('ceiling'));
  const epoch = optNum(row?.get('epoch'));
  return ceiling === undefined || epoch === undefined ? undefined : { ceiling, epoch };
}

function checkNumber(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new InternalError(`invalid ${what} ${String(value)}`);
}

/** Another process won the round: back off a little (randomized) before retrying. */
export async function contentionPause(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6));
  await new Promise((resolve) => setTimeout(resolve, ms));
}
