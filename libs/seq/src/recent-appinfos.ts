/**
 * appinfo → seq of entries this owner stored or saw stored recently, across its inboxes,
 * least recently used out first. A client's resend usually follows its original within
 * seconds, so this answers it without allocating a seq or calling the store; an older resend
 * goes to the store, which dedups it as well (it only burns a seq then). A hit is always
 * true: committed entries are never removed before their 180-day TTL.
 */
export class RecentAppinfos {
  private readonly seqs = new Map<string, number>();

  constructor(private readonly maxKeys: number) {}

  get(inbox: string, appinfo: string): number | undefined {
    return this.seqs.get(key(inbox, appinfo));
  }

  /** The known seqs of `appinfos` in `inbox`. */
  lookup(inbox: string, appinfos: Iterable<string>): Map<string, number> {
    const found = new Map<string, number>();
    for (const appinfo of appinfos) {
      const seq = this.get(inbox, appinfo);
      if (seq !== undefined) found.set(appinfo, seq);
    }
    return found;
  }

  remember(inbox: string, appinfo: string, seq: number): void {
    if (this.maxKeys <= 0) return;
    const k = key(inbox, appinfo);
    this.seqs.delete(k);
    this.seqs.set(k, seq);
    if (this.seqs.size > this.maxKeys) {
      const oldest = this.seqs.keys().next();
      if (oldest.done !== true) this.seqs.delete(oldest.value);
    }
  }

  get size(): number {
    return this.seqs.size;
  }
}

function key(inbox: string, appinfo: string): string {
  return `${inbox}\u0000${appinfo}`;
}
