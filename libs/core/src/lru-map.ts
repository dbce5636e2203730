/**
 * A Map bounded to a total weight (by default each value weighs 1, so the bound is a key
 * count), least recently set out first (Map insertion order; a `set` re-inserts). For memos
 * whose misses only cost a store call.
 */
export class LruMap<K, V> {
  private readonly values = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(private readonly maxWeight: number, private readonly weigh: (value: V) => number = () => 1) {}

  get(key: K): V | undefined {
    return this.values.get(key)?.value;
  }

  /** (Re)inserts `key` as the most recent; call again after changing a value's weight. */
  set(key: K, value: V): void {
    if (this.maxWeight <= 0) return;
    this.delete(key);
    const weight = this.weigh(value);
    this.values.set(key, { value, weight });
    this.total += weight;
    while (this.total > this.maxWeight) {
      const oldest = this.values.keys().next();
      if (oldest.done === true) break;
      this.delete(oldest.value);
    }
  }

  delete(key: K): void {
    const held = this.values.get(key);
    if (held === undefined) return;
    this.values.delete(key);
    this.total -= held.weight;
  }

  get size(): number {
    return this.values.size;
  }

  /** Sum of the weights held. */
  get weight(): number {
    return this.total;
  }
}
