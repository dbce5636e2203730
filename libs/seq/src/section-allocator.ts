/**
 * WeChat seqsvr's allocator for one section (one shard of inboxes).
 *
 * Every key (inbox) has a current seq kept in memory; seqs are handed out from memory. The
 * section has one persisted ceiling: no seq above it is ever handed out before a raise of the
 * ceiling is durable. After a restart or takeover the new owner claims the section with a
 * higher epoch and starts every key from the persisted ceiling C (next seq C+1): a jump
 * forward, never a step back, with no need to know what the old owner handed out.
 */
import { FencedError, silentLogger } from '@seqline/core';
import type { Logger, SeqCeilingStore } from '@seqline/core';
import type { KeyBudget, KeyHolder } from './key-budget.ts';

export interface SectionAllocatorOptions {
  section: string;
  ceilings: SeqCeilingStore;
  /** Owner epoch (from `ceilings.nextEpoch`); a higher epoch claiming the section fences this one. */
  epoch: number;
  /** How far each raise moves the ceiling past what is needed. Default 10 000 (seqsvr). */
  step?: number;
  /** Fraction of a step consumed before a background raise starts. Default 0.8. */
  preRaiseAt?: number;
  /**
   * Most keys whose current seq is remembered. Beyond it the least recently used are forgotten
   * in chunks and the section floor rises to the highest forgotten seq, so a forgotten key
   * restarts above anything it was given (the same jump forward as a takeover). Default 4 000 000.
   */
  maxKeys?: number;
  /** The process's bound across sections; the allocator joins it and leaves on `release`. */
  budget?: KeyBudget;
  logger?: Logger;
}

export class SectionAllocator implements KeyHolder {
  readonly section: string;
  readonly epoch: number;
  private readonly ceilings: SeqCeilingStore;
  private readonly step: number;
  private readonly preRaiseGap: number;
  private readonly maxKeys: number;
  private readonly logger: Logger;
  private budget: KeyBudget | undefined;

  /** key → last seq handed out (or observed); least recently used first once a bound is half full. */
  private readonly current = new Map<string, number>();
  /** Seq a key not in `current` is considered to be at: the claimed ceiling, raised by eviction. */
  private floor = 0;
  /** Highest ceiling known to be durable. Nothing above it is handed out. */
  private persisted = 0;
  /** The ceiling this allocator claimed: every seq at or below it was handed out in an earlier term. */
  private claimed = 0;
  /** Handing out a seq above this starts a background raise. */
  private preRaiseMark = 0;
  private raising: { target: number; promise: Promise<void> } | undefined;
  private starting: Promise<void> | undefined;
  private started = false;
  private deposed: FencedError | undefined;
  private released = false;

  constructor(options: SectionAllocatorOptions) {
    this.section = options.section;
    this.ceilings = options.ceilings;
    this.epoch = options.epoch;
    this.step = options.step ?? 10_000;
    if (!Number.isSafeInteger(this.step) || this.step < 1) throw new RangeError(`bad step ${this.step}`);
    const preRaiseAt = options.preRaiseAt ?? 0.8;
    this.preRaiseGap = Math.floor(this.step * (1 - Math.min(Math.max(preRaiseAt, 0), 1)));
    this.maxKeys = options.maxKeys ?? 4_000_000;
    this.logger = (options.logger ?? silentLogger).child({ section: this.section, epoch: this.epoch });
    this.budget = options.budget;
    this.budget?.join(this);
  }

  /**
   * Claims the section and makes the first raise durable before anything is handed out.
   * Idempotent; a transient failure may be retried by calling again.
   */
  start(): Promise<void> {
    if (this.deposed) return Promise.reject(this.deposed);
    this.starting ??= this.claimAndRaise().catch((err: unknown) => {
      this.starting = undefined;
      throw this.noteFailure(err);
    });
    return this.starting;
  }

  get isStarted(): boolean {
    return this.started;
  }
  get isDeposed(): boolean {
    return this.deposed !== undefined;
  }
  /** The durable ceiling as this allocator knows it. */
  get ceiling(): number {
    return this.persisted;
  }
  /** Seqs at or below it were handed out before this allocator's term (0 before it started). */
  get claimedCeiling(): number {
    return this.claimed;
  }
  /** Number of keys whose current seq is remembered. */
  get trackedKeys(): number {
    return this.current.size;
  }

  /** Last seq handed out (or observed) for `key`; the floor for a key not seen yet. */
  currentOf(key: string): number {
    this.assertUsable();
    return this.current.get(key) ?? this.floor;
  }

  /**
   * Bumps a key's current seq up to `seq` (e.g. the store's head after a takeover), so the
   * next seq is above it. Never moves a key down.
   */
  observe(key: string, seq: number): void {
    this.assertUsable();
    if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`bad seq ${seq}`);
    const cur = this.current.get(key);
    if (cur === undefined) {
      if (seq > this.floor) this.remember(key, seq);
    } else if (seq > cur) {
      this.current.set(key, seq);
    }
  }

  /**
   * Hot path: the next seq of `key` from memory, or undefined when the ceiling must be raised
   * first (a raise is then already under way; `next` waits for it).
   */
  tryNextSync(key: string): number | undefined {
    return this.tryTakeSync(key, 1);
  }

  /**
   * Takes `count` consecutive seqs for `key` if they are all under the durable ceiling and
   * returns the first; otherwise starts (or joins) a raise and returns undefined.
   */
  tryTakeSync(key: string, count: number): number | undefined {
    this.assertUsable();
    const cur = this.current.get(key);
    const last = (cur ?? this.floor) + count;
    if (last > this.persisted) {
      // Start the raise now so a caller that comes back finds it in flight (or done).
      this.ensureCeiling(last).catch(() => {
        /* surfaced to whoever awaits; logged in noteFailure */
      });
      return undefined;
    }
    if (cur === undefined) {
      this.remember(key, last);
    } else {
      // Once a bound is half reached, re-inserted so that what is forgotten first is who wrote
      // least recently: a forgotten key's next seq jumps to the floor, which leaves a gap the
      // store must clear. Below that, order does not matter and the delete is saved.
      if (this.underPressure()) this.current.delete(key);
      this.current.set(key, last);
    }
    if (last > this.preRaiseMark && this.raising === undefined) this.preRaise(last);
    return last - count + 1;
  }

  /** `count` strictly increasing, consecutive seqs for `key`; waits for a raise when needed. */
  async next(key: string, count = 1): Promise<number[]> {
    if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`bad count ${count}`);
    if (!this.started) await this.start();
    for (;;) {
      const first = this.tryTakeSync(key, count);
      if (first !== undefined) {
        const seqs = new Array<number>(count);
        for (let i = 0; i < count; i++) seqs[i] = first + i;
        return seqs;
      }
      // Another caller for the same key may take seqs while we wait: loop and re-check.
      await this.ensureCeiling(this.currentOf(key) + count);
    }
  }

  /** Resolves once the durable ceiling is >= needed. Concurrent callers share one raise. */
  private ensureCeiling(needed: number): Promise<void> {
    if (this.deposed) return Promise.reject(this.deposed);
    if (this.persisted >= needed) return Promise.resolve();
    const inflight = this.raising;
    if (inflight) {
      if (inflight.target >= needed) return inflight.promise;
      // Raises are serialized; whoever needs more than the one in flight starts the next.
      return inflight.promise.then(() => this.ensureCeiling(needed));
    }
    return this.raiseTo(needed + this.step);
  }

  private preRaise(handedOut: number): void {
    this.raiseTo(Math.max(handedOut, this.persisted) + this.step).catch(() => {
      /* already logged; the next caller that needs the ceiling retries or sees FencedError */
    });
  }

  private raiseTo(target: number): Promise<void> {
    const promise = this.ceilings.raise({ section: this.section, ceiling: target, epoch: this.epoch }).then(
      () => {
        this.raising = undefined;
        this.setPersisted(target);
      },
      (err: unknown) => {
        this.raising = undefined;
        throw this.noteFailure(err);
      },
    );
    this.raising = { target, promise };
    return promise;
  }

  private async claimAndRaise(): Promise<void> {
    const claimed = await this.ceilings.claim({ section: this.section, epoch: this.epoch });
    this.claimed = claimed;
    this.floor = Math.max(this.floor, claimed);
    this.setPersisted(claimed);
    await this.raiseTo(claimed + this.step);
    this.started = true;
    this.logger.info({ claimed, ceiling: this.persisted }, 'seq section claimed');
  }

  private setPersisted(ceiling: number): void {
    if (ceiling <= this.persisted) return;
    this.persisted = ceiling;
    this.preRaiseMark = ceiling - this.preRaiseGap;
  }

  private noteFailure(err: unknown): unknown {
    if (err instanceof FencedError) {
      if (!this.deposed) this.logger.warn({ err: err.message }, 'seq section fenced: another owner claimed it');
      this.deposed = err;
    } else {
      this.logger.error({ err }, 'seq ceiling write failed');
    }
    return err;
  }

  /**
   * For an owner being dropped (closed, its lease gone): forgets every key and leaves the
   * budget. Nothing may be taken from it afterwards.
   */
  release(): void {
    this.released = true;
    this.budget?.leave(this);
    this.budget = undefined;
    this.current.clear();
  }

  private assertUsable(): void {
    if (this.released) throw new Error(`seq section ${this.section} released`);
    if (this.deposed) throw this.deposed;
    if (!this.started) throw new Error(`seq section ${this.section} not started`);
  }

  private underPressure(): boolean {
    const budget = this.budget;
    return this.current.size * 2 >= this.maxKeys || (budget !== undefined && budget.size * 2 >= budget.maxKeys);
  }

  private remember(key: string, seq: number): void {
    if (this.current.size >= this.maxKeys) this.forgetOldest(Math.max(1, Math.floor(this.maxKeys / 8)));
    this.current.set(key, seq);
    this.budget?.added();
  }

  /**
   * Forgets the `count` least recently used keys (returns how many); the floor covers what they
   * were given. Called at this section's own bound and by the process's budget.
   */
  forgetOldest(count: number): number {
    let n = 0;
    for (const [key, seq] of this.current) {
      if (n >= count) break;
      if (seq > this.floor) this.floor = seq;
      this.current.delete(key);
      n++;
    }
    this.budget?.removed(n);
    return n;
  }
}
