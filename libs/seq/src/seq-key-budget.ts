/**
 * One bound on the keys remembered by all the SectionAllocators of a process.
 *
 * Each allocator remembers one current seq per key of its section (seqsvr's price for handing
 * out seqs without a read), bounded per section. A worker runs an allocator per leased shard
 * (inbox and group sections), so a per-section bound alone lets a process hold 128 × it. Past
 * this budget the section holding the most keys forgets its oldest eighth; forgetting raises
 * that section's floor, so a forgotten key restarts above anything it was given (the same jump
 * forward a takeover makes). Taking from the largest keeps the sections near equal, which is
 * what their users' share of the traffic makes them anyway.
 */

/** What the budget needs of an allocator. */
export interface SeqKeyHolder {
  readonly trackedKeys: number;
  /** Forgets up to `count` of its oldest keys, reporting them through `SeqKeyBudget.removed`. */
  forgetOldest(count: number): number;
}

export class SeqKeyBudget {
  readonly maxKeys: number;
  private readonly holders = new Set<SeqKeyHolder>();
  private total = 0;

  constructor(maxKeys: number) {
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`bad maxKeys ${maxKeys}`);
    this.maxKeys = maxKeys;
  }

  /** Keys remembered by the allocators that joined (at most `maxKeys`). */
  get size(): number { return this.total; }

  /** Number of allocators that joined and have not left. */
  get holderCount(): number { return this.holders.size; }

  join(holder: SeqKeyHolder): void {
    if (this.holders.has(holder)) return;
    this.holders.add(holder);
    this.total += holder.trackedKeys;
  }

  /** An allocator being dropped: its keys no longer count. */
  leave(holder: SeqKeyHolder): void {
    if (this.holders.delete(holder)) this.total -= holder.trackedKeys;
  }

  /** A joined allocator remembered one more key; may make the largest one forget some. */
  added(): void {
    if (++this.total > this.maxKeys) this.shed();
  }

  /** A joined allocator forgot `count` keys. */
  removed(count: number): void {
    this.total -= count;
  }

  private shed(): void {
    let largest: SeqKeyHolder | undefined;
    for (const h of this.holders) if (largest === undefined || h.trackedKeys > largest.trackedKeys) largest = h;
    if (largest === undefined || largest.trackedKeys === 0) return;
    // An eighth of the largest, but at least enough to get back under the bound.
    const excess = this.total - this.maxKeys;
    largest.forgetOldest(Math.max(excess, Math.ceil(largest.trackedKeys / 8)));
  }
}
