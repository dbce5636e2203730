/** The open sockets of one gateway, by user, oldest first: the per-user cap (Limits.perUserSockets). */
import type { Caller } from '@seqline/messaging';

interface UserSocket {
  readonly caller: Caller;
}

export class UserSockets<S extends UserSocket = UserSocket> {
  /** Per `tenant:user`, in accept order (a Set iterates in insertion order). */
  private readonly byUser = new Map<string, Set<S>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /**
   * Adds `socket`; returns the user's oldest sockets beyond `cap` (removed here already), for
   * the caller to close. The new socket itself is never among them.
   */
  add(socket: S, cap: number): S[] {
    const key = keyOf(socket.caller);
    let mine = this.byUser.get(key);
    if (mine === undefined) this.byUser.set(key, (mine = new Set()));
    if (mine.has(socket)) return [];
    mine.add(socket);
    this.count++;
    const evicted: S[] = [];
    for (const oldest of mine) {
      if (mine.size <= Math.max(1, cap)) break;
      mine.delete(oldest);
      this.count--;
      evicted.push(oldest);
    }
    return evicted;
  }

  delete(socket: S): void {
    const key = keyOf(socket.caller);
    const mine = this.byUser.get(key);
    if (mine === undefined || !mine.delete(socket)) return;
    this.count--;
    if (mine.size === 0) this.byUser.delete(key);
  }

  countOf(caller: Caller): number {
    return this.byUser.get(keyOf(caller))?.size ?? 0;
  }

  all(): S[] {
    return [...this.byUser.values()].flatMap((mine) => [...mine]);
  }
}

function keyOf(caller: Caller): string {
  return `${caller.tenant}:${caller.user}`;
}
