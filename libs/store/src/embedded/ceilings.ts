/**
 * Seq section ceilings and owner epochs on LMDB. Each operation is a compare-and-set inside
 * one batched write; writes run one at a time, so the epoch check cannot race.
 */
import type { Database } from 'lmdb';
import { FencedError, InternalError, type SeqCeilingStore } from '@seqline/core';
import type { WriteBatcher } from './write-batcher.ts';

export interface StoredCeiling {
  ceiling: number;
  /** Epoch of the current owner: the highest epoch that claimed (or raised) the section. */
  epoch: number;
}

export class LmdbSeqCeilingStore implements SeqCeilingStore {
  constructor(
    private readonly epochs: Database<number, string>,
    private readonly ceilings: Database<StoredCeiling, string>,
    private readonly writes: WriteBatcher,
  ) {}

  async nextEpoch(scope: string): Promise<number> {
    return this.writes.run(() => {
      const next = (this.epochs.get(scope) ?? 0) + 1;
      this.epochs.put(scope, next);
      return next;
    });
  }

  async claim(section: string, epoch: number): Promise<number> {
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
  async raise(section: string, ceiling: number, epoch: number): Promise<void> {
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
