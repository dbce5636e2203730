import type { KeyedQueue, LoadShedder } from '@seqline/core';
import type { MessagingDeps } from './deps.ts';
import type { InFlightCounter } from './load.ts';

/** The deps plus the per-process state the service keeps (built once by createMessaging). */
export interface MessagingContext extends MessagingDeps {
  shedder: LoadShedder;
  inFlight: InFlightCounter;
  /**
   * Membership changes of one group are serialized: each recomputes the tier from the member
   * count it just wrote, so two concurrent adds cannot leave a stale tier or miss a switch.
   */
  membershipLocks: KeyedQueue;
}
