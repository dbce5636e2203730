/**
 * A map bounded to a total weight (by default each value weighs 1, so the bound is a key
 * count), least recently set out first: a `get` does not refresh a key, a `set` does. For
 * memos whose misses only cost a store call.
 *
 * Backed by lru-cache, not a Map in insertion order: evicting a Map's oldest key with
 * `keys().next()` walks over every slot deleted since the table was last rehashed, which
 * cost ~50 µs per insert in a full 100 000-key memo (every append of a busy owner).
 */
import { LRUCache } from 'lru-cache';

export class LruMap<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  private readonly cache: LRUCache<K, V> | undefined;

  constructor(maxWeight: number, weigh: (value: V) => number = () => 1) {
    this.cache =
      maxWeight > 0 ? new LRUCache<K, V>({ maxSize: maxWeight, sizeCalculation: (value) => Math.max(1, weigh(value)) }) : undefined;
  }

  get(key: K): V | undefined {
    return this.cache?.peek(key);
  }

  /** (Re)inserts `key` as the most recent; call again after changing a value's weight. */
  set(key: K, value: V): void {
    // A value heavier than the whole bound is not kept, and drops the key's old value.
    this.cache?.set(key, value);
  }

  delete(key: K): void {
    this.cache?.delete(key);
  }

  get size(): number {
    return this.cache?.size ?? 0;
  }

  /** Sum of the weights held. */
  get weight(): number {
    return this.cache?.calculatedSize ?? 0;
  }
}
