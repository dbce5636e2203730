/**
 * Runs async work one at a time per key inside this process. The CQL stores use it where a
 * read-check-write must not race with itself (an inbox append, an LWT on a hot partition):
 * across processes the single-writer rule or the LWT condition still decides, this only keeps
 * one process from contending with itself (Paxos contention is slow and times out).
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(() => undefined, () => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }
}
