import { Fifo } from './fifo.ts';

/** Limits of one consumer: a pool size and an optional per-key bound read live on every start. */
export interface DispatchLimits {
  concurrency: number;
  perKeyConcurrency?: number | (() => number);
}

const UNKEYED = Symbol('unkeyed');
type Slot = string | typeof UNKEYED;

/**
 * Runs submitted items with at most `concurrency` at once and at most `perKeyConcurrency` per
 * key. Unlike a p-limit pool in front of a per-key limiter, an item whose key is saturated never
 * occupies a pool slot while it waits: the pool takes the next item of another key instead, so
 * one hot group cannot stall every other group. Keys with waiting items are served round-robin.
 */
export class KeyedDispatcher<T> {
  private readonly waitingByKey = new Map<Slot, Fifo<T>>();
  private readonly runningByKey = new Map<Slot, number>();
  private readonly running = new Set<Promise<void>>();
  private waitingCount = 0;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly limits: DispatchLimits,
    private readonly run: (item: T) => Promise<void>,
  ) {
    if (!Number.isInteger(limits.concurrency) || limits.concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${limits.concurrency}`);
    }
  }

  get inFlight(): number {
    return this.running.size;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Highest number of items running for one key right now. */
  get maxInFlightPerKey(): number {
    let max = 0;
    for (const [slot, n] of this.runningByKey) if (slot !== UNKEYED && n > max) max = n;
    return max;
  }

  /** The per-key bound in force now (the live function is read on every call). */
  perKeyLimit(): number {
    const configured = this.limits.perKeyConcurrency;
    if (configured === undefined) return Number.POSITIVE_INFINITY;
    const value = typeof configured === 'function' ? configured() : configured;
    // A misconfigured bound must not stop a key forever: fall back to one at a time.
    return Number.isFinite(value) && value >= 1 ? Math.floor(value) : 1;
  }

  submit(item: T, key: string | undefined): void {
    if (this.stopped) return;
    const slot: Slot = key ?? UNKEYED;
    let queue = this.waitingByKey.get(slot);
    if (!queue) {
      queue = new Fifo<T>();
      this.waitingByKey.set(slot, queue);
    }
    queue.push(item);
    this.waitingCount++;
    this.pump();
  }

  /** Stops starting items; returns the ones that were waiting. Running items go on. */
  stop(): T[] {
    this.stopped = true;
    const rest: T[] = [];
    for (const queue of this.waitingByKey.values()) rest.push(...queue.drain());
    this.waitingByKey.clear();
    this.waitingCount = 0;
    return rest;
  }

  /** Resolves when nothing is running. */
  idle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (!this.stopped && this.running.size < this.limits.concurrency && this.waitingCount > 0) {
      const slot = this.nextEligibleSlot();
      if (slot === undefined) return;
      const queue = this.waitingByKey.get(slot);
      const item = queue?.shift();
      if (!queue || item === undefined) return;
      this.waitingCount--;
      // Round-robin: a key that still has work goes to the back of the rotation.
      this.waitingByKey.delete(slot);
      if (queue.size > 0) this.waitingByKey.set(slot, queue);
      this.start(slot, item);
    }
  }

  private nextEligibleSlot(): Slot | undefined {
    const limit = this.perKeyLimit();
    for (const slot of this.waitingByKey.keys()) {
      if (slot === UNKEYED || (this.runningByKey.get(slot) ?? 0) < limit) return slot;
    }
    return undefined;
  }

  private start(slot: Slot, item: T): void {
    this.runningByKey.set(slot, (this.runningByKey.get(slot) ?? 0) + 1);
    const task = (async () => {
      try {
        await this.run(item);
      } catch {
        // `run` owns error handling; a throw here must not leak a slot.
      }
    })();
    this.running.add(task);
    void task.then(() => {
      this.running.delete(task);
      const left = (this.runningByKey.get(slot) ?? 1) - 1;
      if (left > 0) this.runningByKey.set(slot, left);
      else this.runningByKey.delete(slot);
      this.pump();
      if (this.running.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    });
  }
}
