/**
 * A fault injector for an adapter's writes: a test wraps every write of the code under test in
 * `write` / `writeSync` (a proxy around a driver client, a spy around a row writer), arms it,
 * and the failAt-th write from then on fails — refused before it is applied, or applied with
 * its answer lost (a timeout after the write landed). Counting one clean run first says how many
 * write steps there are, so a test can fail each of them in turn.
 */

export class InjectedWriteFault extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InjectedWriteFault';
  }
}

export interface WriteFaultPlan {
  /** The 1-based write that fails; Infinity counts only. */
  failAt: number;
  /** True: the write is applied, then its answer is lost. False: refused before it is applied. */
  applied: boolean;
}

export class WriteFaults {
  private plan: WriteFaultPlan | undefined;
  private seen = 0;

  /** Counts the writes from now on; the plan's failAt-th fails. Without a plan, counts only. */
  arm(plan: WriteFaultPlan = { failAt: Number.POSITIVE_INFINITY, applied: false }): void {
    this.plan = plan;
    this.seen = 0;
  }

  /** Stops counting and failing; returns how many writes were seen while armed. */
  disarm(): number {
    this.plan = undefined;
    return this.seen;
  }

  /** Runs one asynchronous write under the plan. */
  async write<T>(run: () => Promise<T>): Promise<T> {
    const fault = this.next();
    if (fault === undefined) return run();
    if (!fault.applied) throw new InjectedWriteFault(`write ${this.seen} refused (injected)`);
    await run();
    throw new InjectedWriteFault(`write ${this.seen} applied, its answer lost (injected)`);
  }

  /** Runs one synchronous write (inside a transaction) under the plan. */
  writeSync<T>(run: () => T): T {
    const fault = this.next();
    if (fault === undefined) return run();
    if (fault.applied) run();
    throw new InjectedWriteFault(`write ${this.seen} ${fault.applied ? 'applied, then failed' : 'refused'} (injected)`);
  }

  /** The plan if this write is the one to fail. */
  private next(): WriteFaultPlan | undefined {
    if (this.plan === undefined) return undefined;
    this.seen++;
    return this.seen === this.plan.failAt ? this.plan : undefined;
  }
}
