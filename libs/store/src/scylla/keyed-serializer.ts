/**
 * Runs async work one at a time per key inside this process. The CQL stores use it where a
 * read-check-write must not race with itself (an inbox append, an LWT on a hot partition):
 * across processes the single-writer rule or the LWT condition still decides, this only keeps
 * one process from contending with itself (Paxos contention is slow and times out).
 *
 * Every append passes through one, so the usual case — nothing queued for the key — starts the
 * work at once and allocates one promise, not a chain of four.
 */
interface Tail {
  done: Promise<unknown>;
  queued: number;
}

export class KeyedSerializer {
  private readonly tails = new Map<string, Tail>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const queued = this.tails.get(key);
    const result = queued === undefined ? start(work) : queued.done.then(work, work);
    const tail = queued ?? { done: result, queued: 0 };
    if (queued === undefined) this.tails.set(key, tail);
    tail.done = result;
    tail.queued++;
    // Unnamed handlers: tsx (esbuild keepNames) wraps every named function made at run time in
    // a defineProperty call.
    result.then(
      () => this.release(key, tail),
      () => this.release(key, tail),
    );
    return result;
  }

  private release(key: string, tail: Tail): void {
    if (--tail.queued === 0) this.tails.delete(key);
  }

  /** Keys with work queued or running (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }
}

/** `work()`, with a synchronous throw turned into a rejection like `then` would. */
function start<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (err) {
    return Promise.reject(err);
  }
}
