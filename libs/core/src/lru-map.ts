/**
 * A Map bounded to `maxKeys`, least recently set out first (Map insertion order; a `set`
 * re-inserts). For memos whose hits are always true and whose misses only cost a store call.
 */
export class LruMap<K, V> {
  private readonly values = new Map<K, V>();

  constructor(private readonly maxKeys: number) {}

  get(key: K): V | undefined {
    return this.values.get(key);
  }

  set(key: K, value: V): void {
    if (this.maxKeys <= 0) return;
    this.values.delete(key);
    this.values.set(key, value);
    if (this.values.size > this.maxKeys) {
      const oldest = this.values.keys().next();
      if (oldest.done !== true) this.values.delete(oldest.value);
    }
  }

  get size(): number {
    return this.values.size;
  }
}
