/**
 * What a WebSocket frame costs its sender, decided before the frame is decoded: decoding (UTF-8,
 * JSON) is the expensive part, so a sender over its rate must be refused without it.
 */
import { systemClock, type Clock } from '@seqline/core';

/** Bytes one rate-limit token pays for, beyond the first. */
export const BYTES_PER_TOKEN = 4096;

/** Rate-limit tokens of a frame: 1 + floor(bytes / 4096), valid or not (a 64 KB frame costs 17). */
export function frameCost(bytes: number): number {
  return 1 + Math.floor(bytes / BYTES_PER_TOKEN);
}

/**
 * The request id of a frame that is refused unread, when `{"id": n` leads it (as every client
 * writes it); null otherwise. Looks at the first 40 bytes only.
 */
export function leadingRequestId(data: ArrayBuffer | Buffer): number | null {
  const view = data instanceof ArrayBuffer ? new Uint8Array(data, 0, Math.min(40, data.byteLength)) : data.subarray(0, 40);
  const prefix = Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('latin1');
  const match = /^\s*\{\s*"id"\s*:\s*(-?\d{1,16})\s*[,}]/.exec(prefix);
  if (match?.[1] === undefined) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : null;
}

export interface RefusalBudgetOptions {
  /**
   * Refusals a socket may collect at once, in frame-cost units: an undecodable frame spends its
   * frameCost (it was read and parsed: a 64 KB one spends 17), a RATE_LIMITED one 1 (unread).
   */
  burst: number;
  /** How fast that allowance comes back, per second. */
  perSecond: number;
}

/**
 * A socket's allowance of refused frames: a token bucket that a well-behaved client never
 * empties (it backs off on RATE_LIMITED and sends valid frames), unlike the streak of bad frames
 * in a row, which one valid frame every so often resets.
 */
export class RefusalBudget {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly options: RefusalBudgetOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.tokens = options.burst;
    this.updatedAt = clock.now();
  }

  /** Counts one refused frame of `cost`; false when the allowance is spent (close the socket). */
  spend(cost = 1): boolean {
    const now = this.clock.now();
    this.tokens = Math.min(this.options.burst, this.tokens + ((now - this.updatedAt) * this.options.perSecond) / 1000);
    this.updatedAt = now;
    if (this.tokens < cost) return false;
    this.tokens -= cost;
    return true;
  }
}
