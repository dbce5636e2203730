/**
 * A growable set of 30-bit appinfo fingerprints in one Uint32Array (open addressing, linear
 * probing, at most 3/4 full): 5–11 bytes per fingerprint, where a JS Set of small integers
 * takes about 33 on 64-bit Node. A writer holds one per dedup-window bucket (writer-state.ts),
 * up to 65 536 fingerprints each. No delete: a bucket's set is dropped whole when it leaves
 * the window.
 */

/** Fingerprints are below 2^30 (writer-state.ts); stored + 1 so that 0 marks an empty slot. */
const MAX_FINGERPRINT = 2 ** 30 - 1;
const INITIAL_BITS = 4;

export class FingerprintSet {
  private slots = new Uint32Array(1 << INITIAL_BITS);
  /** 32 − log2(slots): the slot of a fingerprint is the top bits of its Fibonacci hash. */
  private shift = 32 - INITIAL_BITS;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Slots allocated (4 bytes each): what the writer's memory bound counts. */
  get capacity(): number {
    return this.slots.length;
  }

  has(print: number): boolean {
    const { slots } = this;
    const key = print + 1;
    const mask = slots.length - 1;
    for (let i = slotOf(print, this.shift); ; i = (i + 1) & mask) {
      const at = slots[i];
      if (at === key) return true;
      if (at === 0) return false;
    }
  }

  add(print: number): void {
    if (!Number.isInteger(print) || print < 0 || print > MAX_FINGERPRINT) throw new RangeError(`not a 30-bit fingerprint: ${print}`);
    if ((this.count + 1) * 4 > this.slots.length * 3) this.grow();
    if (insert(this.slots, this.shift, print + 1)) this.count++;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    this.shift--;
    for (const key of old) if (key !== 0) insert(this.slots, this.shift, key);
  }
}

function slotOf(print: number, shift: number): number {
  return Math.imul(print, 0x9e3779b1) >>> shift;
}

/** True when `key` (a fingerprint + 1) was not there yet. */
function insert(slots: Uint32Array, shift: number, key: number): boolean {
  const mask = slots.length - 1;
  for (let i = slotOf(key - 1, shift); ; i = (i + 1) & mask) {
    const at = slots[i];
    if (at === key) return false;
    if (at === 0) {
      slots[i] = key;
      return true;
    }
  }
}
