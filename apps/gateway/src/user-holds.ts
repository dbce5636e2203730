/**
 * The hold as one gateway applies it (core's holds.ts): asked on every frame, HTTP call and
 * upgrade from what this gateway knows, synchronously; recorded in the shared store (Redis in
 * distributed mode) so that every gateway can learn it.
 */
import { LocalHoldStore, type HoldStore } from '@seqline/core';
import type { RateLimiter } from './rate-limit.ts';

export interface UserHoldsOptions {
  /** What this gateway knows (default: a LocalHoldStore on the system clock). */
  local?: LocalHoldStore;
  /** Where the other gateways read holds; absent: this gateway alone (embedded mode). */
  shared?: HoldStore | undefined;
}

export class UserHolds {
  private readonly local: LocalHoldStore;
  private readonly shared: HoldStore | null;

  constructor(options: UserHoldsOptions = {}) {
    this.local = options.local ?? new LocalHoldStore();
    this.shared = options.shared ?? null;
  }

  /** Whether other gateways' holds are to be learnt (a new socket asks the shared store). */
  get isShared(): boolean {
    return this.shared !== null;
  }

  isHeld(key: string): boolean {
    return this.local.remainingNow(key) > 0;
  }

  /**
   * Holds `key` here at once (its next frames and upgrades on this gateway are refused from now
   * on), then in the shared store; resolves once the shared store has it, or gave up (it fails
   * open, never rejects).
   */
  async hold(key: string, ms: number): Promise<void> {
    this.local.holdNow(key, ms);
    await this.shared?.hold({ key, ms });
  }

  /** Asks the shared store whether `key` is held (by another gateway); if so, holds it here too for the rest. */
  async learn(key: string): Promise<boolean> {
    if (this.shared === null) return false;
    const remaining = await this.shared.remainingMs({ key });
    this.local.holdNow(key, remaining);
    return remaining > 0;
  }
}

/** Refuses a held user before asking the rate limiter (absent: no rate limit, only holds). */
export class HeldUsersFirst implements RateLimiter {
  constructor(
    private readonly holds: UserHolds,
    private readonly inner: RateLimiter | null,
  ) {}

  take(key: string, cost?: number): boolean | Promise<boolean> {
    if (this.holds.isHeld(key)) return false;
    return this.inner?.take(key, cost) ?? true;
  }
}
