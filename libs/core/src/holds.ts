/**
 * The hold (docs/protocol.md, "Limits on a connection"): a user whose socket the refusal rule
 * closed (connection-refusals.ts) is refused — frames, HTTP calls, new sockets — until the hold
 * ends. The store says who is held; in distributed mode it is shared by every gateway.
 */
import { systemClock, type Clock } from './logger.ts';

export interface HoldStore {
  /**
   * Holds `key` for `ms` from now; a longer hold already set stays, a shorter one is extended.
   * `ms` ≤ 0 or not finite holds nothing. Never rejects: a store that cannot record the hold
   * says so in its log and resolves (the gateway that set it holds the user all the same).
   */
  hold(input: { key: string; ms: number }): Promise<void>;
  /** Ms left of `key`'s hold, 0 when not held. Never rejects: a store that cannot answer says 0 (fails open). */
  remainingMs(input: { key: string }): Promise<number>;
}

/**
 * Holds in this process's memory, answered synchronously as well (a gateway asks on every
 * frame). Bounded in number: when full, the holds set longest ago go first — a forgotten hold
 * lets its user back early, never holds anyone wrongly.
 */
export class LocalHoldStore implements HoldStore {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly maxKeys = 100_000,
  ) {
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError(`bad maxKeys ${maxKeys}`);
  }

  hold(input: { key: string; ms: number }): Promise<void> {
    this.holdNow(input.key, input.ms);
    return Promise.resolve();
  }

  remainingMs(input: { key: string }): Promise<number> {
    return Promise.resolve(this.remainingNow(input.key));
  }

  holdNow(key: string, ms: number): void {
    if (!(ms > 0) || !Number.isFinite(ms)) return;
    const now = this.clock.now();
    if ((this.until.get(key) ?? 0) >= now + ms) return;
    if (this.until.size >= this.maxKeys && !this.until.has(key)) this.makeRoom(now);
    this.until.delete(key); // set again last: the Map's order is the order holds were set
    this.until.set(key, now + ms);
  }

  remainingNow(key: string): number {
    const until = this.until.get(key);
    if (until === undefined) return 0;
    const left = until - this.clock.now();
    if (left > 0) return left;
    this.until.delete(key);
    return 0;
  }

  /** Holds currently remembered (ended ones may still count until swept). */
  get size(): number {
    return this.until.size;
  }

  private makeRoom(now: number): void {
    for (const [key, until] of this.until) if (until <= now) this.until.delete(key);
    for (const key of this.until.keys()) {
      if (this.until.size < this.maxKeys) break;
      this.until.delete(key);
    }
  }
}
