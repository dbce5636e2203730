/**
 * Which threads of this process hold which keys (inboxes with a socket, users with a session),
 * kept over one channel of the thread hub. A port neither loses nor reorders, so this is exact
 * where NATS presence (nats-presence.ts) needs sequence numbers and snapshots on gaps: a thread
 * sends every other its whole set when they meet, then what changed, one message per tick.
 * A thread is known once its whole set arrived; until then, or once it is gone, nothing routes to it.
 */
import type { ThreadChannel } from './threads-channel.ts';

export type PresenceMessage = { op: 'all'; keys: string[] } | { op: 'held'; add: string[]; del: string[] };

export class ThreadPresence {
  private readonly mine = new Set<string>();
  private readonly changes = new Map<string, boolean>();
  private flushQueued = false;
  /** Known threads: every key each holds. */
  private readonly others = new Map<number, Set<string>>();
  private channel: ThreadChannel | undefined;

  /** Set once the channel is open (its handlers call into this). */
  attach(channel: ThreadChannel): void {
    this.channel = channel;
  }

  /** This thread holds `key` now, or no longer; told to the others at the end of this tick. */
  set(key: string, held: boolean): void {
    if (held) this.mine.add(key);
    else this.mine.delete(key);
    this.changes.set(key, held);
    if (this.flushQueued) return;
    this.flushQueued = true;
    // One message for every change of a tick: a burst of connects is not a message per user.
    queueMicrotask(() => this.flush());
  }

  holdsHere(key: string): boolean {
    return this.mine.has(key);
  }

  /** Sends what changed since the last flush, now. */
  flush(): void {
    this.flushQueued = false;
    if (this.changes.size === 0) return;
    const msg: PresenceMessage = { op: 'held', add: [], del: [] };
    for (const [key, held] of this.changes) (held ? msg.add : msg.del).push(key);
    this.changes.clear();
    this.channel?.broadcast(msg);
  }

  /** A thread met: it gets this thread's whole set (changes not flushed yet follow it). */
  joined(thread: number): void {
    this.channel?.send(thread, { op: 'all', keys: [...this.mine] } satisfies PresenceMessage);
  }

  gone(thread: number): void {
    this.others.delete(thread);
  }

  /** Applies a presence message of `from`; false when `body` is not one. */
  receive(body: unknown, from: number): boolean {
    if (typeof body !== 'object' || body === null) return false;
    const msg = body as PresenceMessage;
    if (msg.op === 'all' && isStrings(msg.keys)) {
      this.others.set(from, new Set(msg.keys));
      return true;
    }
    if (msg.op !== 'held' || !isStrings(msg.add) || !isStrings(msg.del)) return false;
    const held = this.others.get(from);
    if (held === undefined) return true; // before its whole set: that set is newer than this
    for (const key of msg.add) held.add(key);
    for (const key of msg.del) held.delete(key);
    return true;
  }

  /** The other threads holding `key`, and those reachable but not known yet (they may hold it). */
  holders(key: string): { holding: number[]; unknown: number[] } {
    const holding: number[] = [];
    const unknown: number[] = [];
    for (const thread of this.channel?.live() ?? []) {
      const held = this.others.get(thread);
      if (held === undefined) unknown.push(thread);
      else if (held.has(key)) holding.push(thread);
    }
    return { holding, unknown };
  }

  /** Keys of `keys` each known other thread holds, by thread (threads holding none left out). */
  route(keys: readonly string[]): Map<number, string[]> {
    const routes = new Map<number, string[]>();
    for (const thread of this.channel?.live() ?? []) {
      const held = this.others.get(thread);
      if (held === undefined || held.size === 0) continue;
      const mine: string[] = [];
      for (const key of keys) if (held.has(key)) mine.push(key);
      if (mine.length > 0) routes.set(thread, mine);
    }
    return routes;
  }

  /** What this thread knows of the others (metrics). */
  stats(): { threads: number; known: number; keys: number } {
    let keys = 0;
    for (const held of this.others.values()) keys += held.size;
    return { threads: this.channel?.live().length ?? 0, known: this.others.size, keys };
  }
}

export function isStrings(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}
