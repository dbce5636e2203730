/**
 * Runs async tasks one at a time per key, in the order they were submitted; tasks of different
 * keys run concurrently. A task that rejects (or throws) fails only its own call: the next task
 * of its key still runs. A key's entry lives only while it has a task queued or running, so the
 * map is as large as the keys busy right now, never the keys ever seen.
 *
 * In-process only: callers use it where a read-check-write must not race with itself (an inbox
 * append, an LWT on a hot partition, a group's membership change) or where one key's outputs must
 * leave in order (an inbox's pushes). Across processes another rule decides (the single writer,
 * the LWT condition).
 *
 * Every append passes through one, so the usual case — nothing queued for the key — starts the
 * task at once and allocates one promise, not a chain of four.
 */
interface Tail {
  /** The last task submitted for the key; unset while the first one is still being started. */
  done: Promise<unknown> | undefined;
  /** The task that found the key idle (set once its synchronous part has run). */
  first: Promise<unknown> | undefined;
  /** Tasks submitted for the key and not yet settled. */
  pending: number;
}

export class KeyedQueue<K = string> {
  private readonly tails = new Map<K, Tail>();

  run<T>(key: K, task: () => Promise<T>): Promise<T> {
    const queued = this.tails.get(key);
    if (queued !== undefined) {
      // Submitted from inside the synchronous part of the key's first task: wait for that task,
      // whose promise exists once this turn's code has run.
      const before = queued.done ?? Promise.resolve().then(() => queued.first);
      const result = before.then(task, task);
      queued.done = result;
      queued.pending++;
      this.releaseWhenSettled(key, queued, result);
      return result;
    }
    // The entry goes in before the task starts, so the task itself sees its key busy.
    const tail: Tail = { done: undefined, first: undefined, pending: 1 };
    this.tails.set(key, tail);
    const result = start(task);
    tail.first = result;
    tail.done ??= result;
    this.releaseWhenSettled(key, tail, result);
    return result;
  }

  /** Whether a task of `key` is queued or running (a new one would wait for it). */
  busy(key: K): boolean {
    return this.tails.has(key);
  }

  /** Keys with a task queued or running. */
  get size(): number {
    return this.tails.size;
  }

  /** Resolves once every task submitted so far (and any submitted meanwhile) has settled. */
  async idle(): Promise<void> {
    // A tail has neither only while its first task's synchronous part runs (idle() called from
    // there): its promise exists by the next microtask.
    while (this.tails.size > 0) {
      await Promise.allSettled(Array.from(this.tails.values(), (tail) => tail.done ?? tail.first ?? Promise.resolve()));
    }
  }

  private releaseWhenSettled(key: K, tail: Tail, result: Promise<unknown>): void {
    // Unnamed handlers: tsx (esbuild keepNames) wraps every named function made at run time in
    // a defineProperty call.
    result.then(
      () => this.release(key, tail),
      () => this.release(key, tail),
    );
  }

  private release(key: K, tail: Tail): void {
    if (--tail.pending === 0) this.tails.delete(key);
  }
}

/** `task()`, with a synchronous throw turned into a rejection like `then` would. */
function start<T>(task: () => Promise<T>): Promise<T> {
  try {
    return task();
  } catch (err) {
    return Promise.reject(err);
  }
}
