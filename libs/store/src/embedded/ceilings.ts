/**
 * Seq section ceilings, owner epochs and their release records on LMDB. Each operation is a
 * compare-and-set inside one batched write; writes run one at a time, so the epoch check cannot
 * race.
 */
import type { Database } from 'lmdb';
import {
  FencedError,
  InternalError,
  type DrawnEpoch,
  type EpochRecord,
  type CeilingClaim,
  type CeilingRaise,
  type SeqCeilingStore,
} from '@seqline/core';
import type { WriteBatcher } from './write-batcher.ts';

export interface StoredCeiling {
  ceiling: number;
  /** Epoch of the current owner: the highest epoch that claimed (or raised) the section. */
  epoch: number;
}

/** The last clean release recorded for a scope (SeqCeilingStore.recordRelease). */
export interface StoredRelease {
  epoch: number;
  atMs: number;
}

export interface CeilingDbs {
  /** scope → last epoch handed out */
  epochs: Database<number, string>;
  /** scope → the last clean release recorded */
  releases: Database<StoredRelease, string>;
  ceilings: Database<StoredCeiling, string>;
}

export class LmdbSeqCeilingStore implements SeqCeilingStore {
  private readonly epochs: Database<number, string>;
  private readonly releases: Database<StoredRelease, string>;
  private readonly ceilings: Database<StoredCeiling, string>;

  constructor(
    dbs: CeilingDbs,
    private readonly writes: WriteBatcher,
  ) {
    this.epochs = dbs.epochs;
    this.releases = dbs.releases;
    this.ceilings = dbs.ceilings;
  }

  async nextEpoch(scope: string): Promise<number> {
    return (await this.drawEpoch({ scope })).epoch;
  }

  async drawEpoch({ scope }: { scope: string }): Promise<DrawnEpoch> {
    return this.writes.run(() => {
      const last = this.epochs.get(scope);
      const released = this.releases.get(scope);
      const before: EpochRecord | undefined =
        last === undefined ? undefined : { epoch: last, ...(released ? { released: { epoch: released.epoch, atMs: released.atMs } } : {}) };
      const epoch = (last ?? 0) + 1;
      this.epochs.put(scope, epoch);
      return { epoch, before };
    });
  }

  async recordRelease({ scope, epoch, atMs }: { scope: string; epoch: number; atMs: number }): Promise<boolean> {
    checkNumber('epoch', epoch);
    checkNumber('release time', atMs);
    return this.writes.run(() => {
      if (this.epochs.get(scope) !== epoch) return false;
      this.releases.put(scope, { epoch, atMs });
      return true;
    });
  }

  async claim({ section, epoch }: CeilingClaim): Promise<number> {
    checkNumber('epoch', epoch);
    return this.writes.run(() => {
      const stored = this.ceilings.get(section) ?? { ceiling: 0, epoch: 0 };
      if (epoch < stored.epoch) {
        throw new FencedError(`section ${section} is owned by epoch ${stored.epoch}, claim with ${epoch}`);
      }
      if (epoch > stored.epoch) this.ceilings.put(section, { ceiling: stored.ceiling, epoch });
      return stored.ceiling;
    });
  }

  /** Never lowers a ceiling: raises that arrive out of order keep the highest value. */
  async raise({ section, ceiling, epoch }: CeilingRaise): Promise<void> {
    checkNumber('epoch', epoch);
    checkNumber('ceiling', ceiling);
    await this.writes.run(() => {
      const stored = this.ceilings.get(section) ?? { ceiling: 0, epoch: 0 };
      if (epoch < stored.epoch) {
        throw new FencedError(`section ${section} is owned by epoch ${stored.epoch}, raise with ${epoch}`);
      }
      if (epoch > stored.epoch || ceiling > stored.ceiling) {
        this.ceilings.put(section, { ceiling: Math.max(ceiling, stored.ceiling), epoch });
      }
    });
  }
}

function checkNumber(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new InternalError(`invalid ${what} ${String(value)}`);
}
