/**
 * One bound on the keys several holders of a process remember: the seqs of every section
 * allocator, or the inbox states of every shard owner.
 *
 * A worker runs an owner, and an allocator per section, for each leased shard, so a bound per
 * holder alone lets a process hold 64 or 128 × it. Past this budget the holder with the most
 * keys forgets its oldest: an allocator raises its section's floor, so a forgotten key
 * restarts above anything it was given (the jump forward a takeover makes); an owner drops
 * idle inbox states, which re-read their head from the store. Taking from the largest keeps
 * the holders near equal, which is what their users' share of the traffic makes them anyway.
 */

/** What the budget needs of a holder. */
export interface KeyHolder {
  readonly trackedKeys: number;
  /**
   * Forgets up to `count` of its oldest keys (fewer when the rest are in use), reporting them
   * through `KeyBudget.removed`; returns how many.
   */
  forgetOldest(count: number): number;
}

export class KeyBudget {
  readonly maxKeys: number;
  private readonly holders = new Set<KeyHolder>();
  private total = 0;

  constructor(maxKeys: number) {
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`bad maxKeys ${maxKeys}`);
    this.maxKeys = maxKeys;
  }

  /** Keys remembered by the holders that joined (at most `maxKeys`, unless all the rest are in use). */
  get size(): number {
    return this.total;
  }

  /** Number of holders that joined and have not left. */
  get holderCount(): number {
    return this.holders.size;
  }

  join(holder: KeyHolder): void {
    if (this.holders.has(holder)) return;
    this.holders.add(holder);
    this.total += holder.trackedKeys;
  }

  /** A holder being dropped: its keys no longer count. */
  leave(holder: KeyHolder): void {
    if (this.holders.delete(holder)) this.total -= holder.trackedKeys;
  }

  /** A joined holder remembers one more key; may make the largest one forget some first. */
  added(): void {
    if (++this.total > this.maxKeys) this.shed();
  }

  /** A joined holder forgot `count` keys. */
  removed(count: number): void {
    this.total -= count;
  }

  private shed(): void {
    let largest: KeyHolder | undefined;
    for (const h of this.holders) if (largest === undefined || h.trackedKeys > largest.trackedKeys) largest = h;
    if (largest === undefined || largest.trackedKeys === 0) return;
    // An eighth of the largest, but at least enough to get back under the bound.
    const excess = this.total - this.maxKeys;
    largest.forgetOldest(Math.max(excess, Math.ceil(largest.trackedKeys / 8)));
  }
}
