import type { LoadShedder } from '@seqline/core';
import type { MessagingDeps } from './deps.ts';
import type { InFlightCounter } from './load.ts';

/** Runs tasks one at a time per key (in-process); other keys are not held up. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(task, task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

/** The deps plus the per-process state the service keeps (built once by createMessaging). */
export interface MessagingContext extends MessagingDeps {
  shedder: LoadShedder;
  inFlight: InFlightCounter;
  /**
   * Membership changes of one group are serialized: each recomputes the tier from the member
   * count it just wrote, so two concurrent adds cannot leave a stale tier or miss a switch.
   */
  membershipLocks: KeyedLock;
}
