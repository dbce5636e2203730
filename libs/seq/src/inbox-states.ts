/**
 * The owner's table of active inboxes (queue + cached head), bounded: least recently used
 * first, idle entries dropped after `idleMs` by `sweep` and, past `maxInboxes` (or the
 * process's budget shared with other owners), on insert. A dropped inbox re-reads its head
 * from the store on its next write. Only idle states are ever dropped: a state with work
 * queued or running is its inbox's single writer.
 */
import { shardOf } from '@seqline/core';
import type { InboxKey } from '@seqline/core';
import type { InboxState } from './inbox-queue.ts';
import type { KeyBudget, KeyHolder } from './key-budget.ts';

/** Most states looked at per drop, so a burst of busy inboxes cannot make every insert O(n). */
const MAX_SCAN = 256;

export class InboxStates implements KeyHolder {
  /** Insertion order = least recently used first (re-inserted on use). */
  private readonly states = new Map<InboxKey, InboxState>();
  private budget: KeyBudget | undefined;

  constructor(
    private readonly shardCount: number,
    private readonly maxInboxes: number,
    private readonly idleMs: number,
    budget?: KeyBudget,
  ) {
    this.budget = budget;
    budget?.join(this);
  }

  get size(): number {
    return this.states.size;
  }
  get trackedKeys(): number {
    return this.states.size;
  }

  get(inbox: InboxKey): InboxState | undefined {
    return this.states.get(inbox);
  }

  /** The inbox's state, made most recently used (created if absent). */
  use(inbox: InboxKey): InboxState {
    let state = this.states.get(inbox);
    if (state) {
      this.states.delete(inbox);
    } else {
      state = { inbox, shard: shardOf(inbox, this.shardCount), head: undefined, pending: [], draining: undefined, lastUsed: 0 };
      if (this.states.size >= this.maxInboxes) this.forgetOldest(this.states.size - this.maxInboxes + 1);
      // Before the insert: the new state is idle until its op is queued, and must not be shed.
      this.budget?.added();
    }
    this.states.set(inbox, state);
    return state;
  }

  /** Drain loops still running. */
  running(): Promise<void>[] {
    return [...this.states.values()].flatMap((s) => (s.draining ? [s.draining] : []));
  }

  /** Drops the states idle since before `now - idleMs`; returns how many were dropped. */
  sweep(now: number): number {
    const cutoff = now - this.idleMs;
    let dropped = 0;
    for (const [inbox, state] of this.states) {
      if (isIdle(state) && state.lastUsed <= cutoff) {
        this.states.delete(inbox);
        dropped++;
      }
    }
    this.budget?.removed(dropped);
    return dropped;
  }

  /**
   * Drops up to `count` of the least recently used idle states. The scan is bounded, so the
   * caps are soft while many inboxes are busy, until the sweep catches up.
   */
  forgetOldest(count: number): number {
    let dropped = 0;
    let scanned = 0;
    for (const [inbox, state] of this.states) {
      if (dropped >= count || ++scanned > MAX_SCAN) break;
      if (isIdle(state)) {
        this.states.delete(inbox);
        dropped++;
      }
    }
    this.budget?.removed(dropped);
    return dropped;
  }

  /** For an owner that has closed: every state leaves the budget. */
  release(): void {
    this.budget?.leave(this);
    this.budget = undefined;
    this.states.clear();
  }
}

function isIdle(state: InboxState): boolean {
  // A state with unsettled appends is kept until its next head read (bounded by UnsettledAppends).
  return state.draining === undefined && state.pending.length === 0 && state.unsettled === undefined && state.landed === undefined;
}
