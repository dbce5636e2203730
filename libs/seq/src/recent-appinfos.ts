/**
 * appinfo → seq of entries this owner stored or saw stored recently, across its inboxes,
 * least recently stored out first. A client's resend usually follows its original within
 * seconds, so this answers it without allocating a seq or calling the store; an older resend
 * goes to the store, which dedups it as well (it only burns a seq then). A hit is always
 * true: committed entries are never removed before their 180-day TTL.
 */
import { LruMap } from '@seqline/core';

export class RecentAppinfos {
  private readonly seqs: LruMap<string, number>;

  constructor(maxKeys: number) {
    this.seqs = new LruMap(maxKeys);
  }

  /** The known seqs of `appinfos` in `inbox`. */
  lookup(inbox: string, appinfos: Iterable<string>): Map<string, number> {
    const found = new Map<string, number>();
    for (const appinfo of appinfos) {
      const seq = this.seqs.get(key(inbox, appinfo));
      if (seq !== undefined) found.set(appinfo, seq);
    }
    return found;
  }

  remember(inbox: string, appinfo: string, seq: number): void {
    this.seqs.set(key(inbox, appinfo), seq);
  }
}

function key(inbox: string, appinfo: string): string {
  return `${inbox}\u0000${appinfo}`;
}
