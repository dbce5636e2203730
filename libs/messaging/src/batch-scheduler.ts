/**
 * One tier's worker pool. Jobs handed over by the queue wait here per group; at most `pool()`
 * batches run at once over all groups and at most `perGroup()` for one group (both read live
 * on every decision, so an operator's change applies to the next batch). When a group has
 * several jobs waiting, the next batch takes them all (up to `maxBatch`): that is the merged
 * insert — each member inbox then gets those messages as one append.
 *
 * Items without a key (1:1) are never merged or bounded per key; they only take pool slots.
 */

export interface BatchLimits {
  pool: () => number;
  perGroup: () => number;
  /** Most items merged into one batch. */
  maxBatch: number;
}

export interface BatchStats {
  /** Batches running now, and the pool bound in force. */
  running: number;
  poolLimit: number;
  perGroupLimit: number;
  /** Items waiting for a slot (merged into the next batch of their group). */
  waiting: number;
  /** Highest number of batches of one group seen running at once since the last reset. */
  maxRunningPerGroup: number;
  /** Highest pool occupancy since the last reset. */
  maxRunning: number;
  batches: number;
  items: number;
  /** Largest batch since the last reset. */
  largestBatch: number;
  /** Running batches per group now. */
  runningByGroup: Record<string, number>;
}

interface Waiter<T> {
  item: T;
  resolve(): void;
  reject(err: unknown): void;
}

const UNKEYED = '\u0000unkeyed';

/** A limit from a live source; a broken value must not stop the pool, so it falls back to 1. */
function sane(n: number): number {
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1;
}

export class BatchScheduler<T> {
  /** Keys with waiting items, in round-robin order (a served key goes to the back). */
  private readonly waiting = new Map<string, Waiter<T>[]>();
  private readonly runningByKey = new Map<string, number>();
  private running = 0;
  private waitingCount = 0;
  private hw = { perGroup: 0, running: 0, batch: 0 };
  private batches = 0;
  private items = 0;

  constructor(
    private readonly limits: BatchLimits,
    private readonly run: (key: string | undefined, items: T[]) => Promise<void>,
  ) {}

  /** Resolves when the batch holding `item` succeeded; rejects with its error (the job retries). */
  submit(key: string | undefined, item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      const slot = key ?? UNKEYED;
      let list = this.waiting.get(slot);
      if (!list) this.waiting.set(slot, (list = []));
      list.push({ item, resolve, reject });
      this.waitingCount++;
      this.pump();
    });
  }

  /** Re-reads the limits and starts what they now allow (a raised limit applies at once). */
  poke(): void {
    this.pump();
  }

  /** Items of this group waiting (admin `group show` queue depth). */
  waitingFor(key: string): number {
    return this.waiting.get(key)?.length ?? 0;
  }

  stats(): BatchStats {
    return {
      running: this.running,
      poolLimit: sane(this.limits.pool()),
      perGroupLimit: sane(this.limits.perGroup()),
      waiting: this.waitingCount,
      maxRunningPerGroup: this.hw.perGroup,
      maxRunning: this.hw.running,
      batches: this.batches,
      items: this.items,
      largestBatch: this.hw.batch,
      runningByGroup: Object.fromEntries([...this.runningByKey].filter(([k]) => k !== UNKEYED)),
    };
  }

  /** Starts a new measurement window for the high-water marks. */
  resetHighWater(): void {
    this.hw = { perGroup: this.currentMaxPerGroup(), running: this.running, batch: 0 };
  }

  private currentMaxPerGroup(): number {
    let max = 0;
    for (const [k, n] of this.runningByKey) if (k !== UNKEYED && n > max) max = n;
    return max;
  }

  private pump(): void {
    const pool = sane(this.limits.pool());
    const perGroup = sane(this.limits.perGroup());
    while (this.running < pool && this.waitingCount > 0) {
      const slot = this.nextSlot(perGroup);
      if (slot === undefined) return;
      const list = this.waiting.get(slot) as Waiter<T>[];
      const take = slot === UNKEYED ? 1 : this.limits.maxBatch;
      const batch = list.splice(0, take);
      this.waitingCount -= batch.length;
      this.waiting.delete(slot);
      if (list.length > 0) this.waiting.set(slot, list); // to the back: round-robin
      this.start(slot, batch);
    }
  }

  private nextSlot(perGroup: number): string | undefined {
    for (const slot of this.waiting.keys()) {
      if (slot === UNKEYED || (this.runningByKey.get(slot) ?? 0) < perGroup) return slot;
    }
    return undefined;
  }

  private start(slot: string, batch: Waiter<T>[]): void {
    const forKey = (this.runningByKey.get(slot) ?? 0) + 1;
    this.runningByKey.set(slot, forKey);
    this.running++;
    this.batches++;
    this.items += batch.length;
    if (slot !== UNKEYED) this.hw.perGroup = Math.max(this.hw.perGroup, forKey);
    this.hw.running = Math.max(this.hw.running, this.running);
    this.hw.batch = Math.max(this.hw.batch, batch.length);
    const key = slot === UNKEYED ? undefined : slot;
    let work: Promise<void>;
    try {
      work = this.run(
        key,
        batch.map((w) => w.item),
      );
    } catch (err) {
      work = Promise.reject(err);
    }
    work
      .then(
        () => {
          for (const w of batch) w.resolve();
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err);
        },
      )
      .finally(() => {
        this.running--;
        const left = (this.runningByKey.get(slot) ?? 1) - 1;
        if (left > 0) this.runningByKey.set(slot, left);
        else this.runningByKey.delete(slot);
        this.pump();
      });
  }
}
