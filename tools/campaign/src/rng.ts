/**
 * The campaign's randomness: every choice of a round (workload, faults, their times) comes from
 * generators seeded by the round's seed, so `--replay <seed>` makes the same choices again.
 * (Timing still differs between runs: the machine decides how far each step gets.)
 */

/** mulberry32: small, fast, good enough for picking faults and ops. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new RangeError('pick from nothing');
    return xs[Math.floor(this.next() * xs.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** A child generator for one actor, independent of how many numbers the others draw. */
  fork(label: string): Rng {
    return new Rng(hashSeed(`${this.state}:${label}`));
  }
  /** Picks a key by weight. */
  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((n, [, w]) => n + w, 0);
    let x = this.next() * total;
    for (const [k, w] of entries) {
      x -= w;
      if (x < 0) return k;
    }
    return entries[entries.length - 1]![0];
  }
}

/** FNV-1a of a string: a seed from a name (`<campaign seed>/<round>`). */
export function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
