/**
 * The owner's table of active inboxes (queue + cached head), bounded: least recently used
 * first, idle entries dropped after `idleMs` by `sweep` and, past `maxInboxes`, on insert.
 * A dropped inbox re-reads its head from the store on its next write.
 */
import { shardOf } from '@seqline/core';
import type { InboxKey } from '@seqline/core';
import type { InboxState } from './inbox-queue.ts';

export class InboxStates {
  /** Insertion order = least recently used first (re-inserted on use). */
  private readonly states = new Map<InboxKey, InboxState>();

  constructor(
    private readonly shardCount: number,
    private readonly maxInboxes: number,
    private readonly idleMs: number,
  ) {}

  get size(): number { return this.states.size; }

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
      if (this.states.size >= this.maxInboxes) this.dropOldestIdle();
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
    return dropped;
  }

  /**
   * Makes room for one more inbox by dropping the least recently used idle ones. The scan is
   * bounded so a burst of busy inboxes cannot make every insert O(n); the cap is then soft
   * until the sweep catches up.
   */
  private dropOldestIdle(): void {
    let excess = this.states.size - this.maxInboxes + 1;
    let scanned = 0;
    for (const [inbox, state] of this.states) {
      if (excess <= 0 || ++scanned > 256) break;
      if (isIdle(state)) {
        this.states.delete(inbox);
        excess--;
      }
    }
  }
}

function isIdle(state: InboxState): boolean {
  return state.draining === undefined && state.pending.length === 0;
}
