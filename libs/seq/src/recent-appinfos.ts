/**
 * appinfo → seq of entries this owner stored or saw stored recently, across its inboxes,
 * least recently stored out first. A client's resend usually follows its original within
 * seconds, so this answers it without allocating a seq or calling the store; an older resend
 * goes to the store, which dedups it as well (it only burns a seq then). A hit is always
 * true: committed entries are never removed before their 180-day TTL.
 *
 * Two generations (see TwoGenerationMap) of per-inbox maps: every append looks up and
 * remembers here, and keying by inbox then appinfo hashes the two strings the owner already
 * holds instead of building and hashing a joined key each time.
 *
 * The owners of one process share one (a worker runs an owner per leased shard): the bound is
 * the process's memory, not each owner's. Sharing is sound because every fact here stays true
 * whoever owns the inbox later.
 */
const NONE: ReadonlyMap<string, number> = new Map();

export class RecentAppinfos {
  private current = new Map<string, Map<string, number>>();
  private previous = new Map<string, Map<string, number>>();
  /** appinfos remembered in the current generation, and in the previous one. */
  private count = 0;
  private previousCount = 0;
  private readonly generationSize: number;

  constructor(maxKeys: number) {
    this.generationSize = Math.floor(maxKeys / 2);
  }

  /** appinfos held (at most maxKeys; one remembered again in a newer generation counts twice). */
  get size(): number {
    return this.count + this.previousCount;
  }

  /** The known seqs of `appinfos` in `inbox` (usually none: no map is made then). */
  lookup(inbox: string, appinfos: Iterable<string>): ReadonlyMap<string, number> {
    let found: Map<string, number> | undefined;
    for (const appinfo of appinfos) {
      const seq = this.lookupOne(inbox, appinfo);
      if (seq !== undefined) (found ??= new Map()).set(appinfo, seq);
    }
    return found ?? NONE;
  }

  /** The known seq of one appinfo in `inbox`, if any (the usual single-entry append). */
  lookupOne(inbox: string, appinfo: string): number | undefined {
    return this.current.get(inbox)?.get(appinfo) ?? this.previous.get(inbox)?.get(appinfo);
  }

  remember(inbox: string, appinfo: string, seq: number): void {
    if (this.generationSize === 0) return;
    let seqs = this.current.get(inbox);
    if (seqs === undefined) this.current.set(inbox, (seqs = new Map<string, number>()));
    seqs.set(appinfo, seq);
    if (++this.count >= this.generationSize) {
      this.previous = this.current;
      this.previousCount = this.count;
      this.current = new Map();
      this.count = 0;
    }
  }
}
