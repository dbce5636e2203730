/**
 * When a ShardOwnerHost balances: one round after another, every `intervalMs`, never two at
 * once; a kick (another host released a shard) runs the next round at once, or right after the
 * running one.
 */
import type { Logger } from '@seqline/core';
import { errMessage } from './shard-leases.ts';

export class BalancingRounds {
  /** Set exactly while waiting for the next round (unset while one runs, and once stopped). */
  private timer: NodeJS.Timeout | undefined;
  private kickPending = false;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly round: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Runs the first round, then keeps going. */
  async start(): Promise<void> {
    await this.runOnce();
    this.next();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.timer === undefined) {
      this.kickPending = true; // a round is running: the next follows at once
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0);
  }

  /** No round starts after this; resolves once the running one (if any) ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private runOnce(): Promise<void> {
    this.running = this.round().catch((err: unknown) => {
      this.logger.warn({ err: errMessage(err) }, 'shard balancing round failed');
    });
    return this.running;
  }

  private next(): void {
    const again = this.kickPending;
    this.kickPending = false;
    this.schedule(again ? 0 : this.intervalMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.runOnce().finally(() => this.next());
    }, delayMs);
    this.timer.unref();
  }
}
