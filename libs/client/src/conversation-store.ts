import type { Conv, Conversation, Entry } from './wire.ts';

/** `type:id`, the store's key of a conversation. */
export const convKey = (conv: Conv): string => `${conv.type}:${conv.id}`;

/**
 * Whether `next` may replace `current`. Each state is exact as of an inbox seq, and answers
 * can arrive out of order (a push's convs, a sync page, a refresh, a `conversations` page), so
 * a state older than the one held is dropped. At the same asOfSeq the states describe the same
 * inbox; only a read-fanout group's gseq position (no inbox entry) can still move, forward.
 */
export function supersedes(next: Conversation, current: Conversation | undefined): boolean {
  if (current === undefined || next.asOfSeq > current.asOfSeq) return true;
  if (next.asOfSeq < current.asOfSeq) return false;
  return (next.lastGseq ?? 0) >= (current.lastGseq ?? 0) && (next.readGseq ?? 0) >= (current.readGseq ?? 0);
}

/** Newest activity first: by lastSeq (the server's sort key), then by gseq for read-fanout groups. */
function newestFirst(a: Conversation, b: Conversation): number {
  return b.lastSeq - a.lastSeq || (b.lastGseq ?? 0) - (a.lastGseq ?? 0) || convKey(a.conv).localeCompare(convKey(b.conv));
}

/** Two states that render the same (messages aside, which only `conversations` pages carry). */
function sameState(a: Conversation, b: Conversation): boolean {
  const { messages: _a, ...restA } = a;
  const { messages: _b, ...restB } = b;
  return JSON.stringify(restA) === JSON.stringify(restB);
}

/**
 * The client's conversation list: only the server's states, each kept if no newer one was
 * seen. It never counts anything itself: unread, mentions and `last` are what the server said,
 * exact at that state's asOfSeq. A conversation is never removed (the server never drops one;
 * a clear or delete makes it empty, and a newer state says so).
 */
export class ConversationStore {
  private readonly byKey = new Map<string, Conversation>();
  private sorted: Conversation[] | null = [];

  /** Takes the states that are newer than the ones held; true when the list changed. */
  apply(states: readonly Conversation[]): boolean {
    let changed = false;
    for (const state of states) {
      const key = convKey(state.conv);
      const current = this.byKey.get(key);
      if (!supersedes(state, current)) continue;
      const { messages: _messages, ...kept } = state;
      if (current !== undefined && sameState(kept, current)) continue;
      this.byKey.set(key, kept);
      changed = true;
    }
    if (changed) this.sorted = null;
    return changed;
  }

  /** The list, newest activity first (a copy: the caller may keep or sort it). */
  list(): Conversation[] {
    this.sorted ??= [...this.byKey.values()].sort(newestFirst);
    return [...this.sorted];
  }

  get(conv: Conv): Conversation | undefined {
    return this.byKey.get(convKey(conv));
  }

  get size(): number {
    return this.byKey.size;
  }

  clear(): void {
    this.byKey.clear();
    this.sorted = [];
  }
}

/** Entry kinds that change some conversation's state (receipts, ticks and tier switches do not). */
const TOUCHING: ReadonlySet<Entry['kind']> = new Set(['msg', 'group', 'read', 'clear', 'recall', 'edit', 'delete']);

export function touchesConversations(entries: readonly Entry[]): boolean {
  return entries.some((e) => TOUCHING.has(e.kind));
}
