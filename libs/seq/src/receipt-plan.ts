/** Which receipt entries a run of merged addReceipt calls needs (reads only; no writes). */
import { buildReceiptEntry, messageKey, mergeReaders, splitKey } from '@seqline/core';
import type { InboxKey, Logger, NewEntry, TimelineStore } from '@seqline/core';

export interface ReceiptPlan {
  /** Seq of the message read, in this inbox. */
  seq: number;
  /** All readers after the merge, sorted. */
  readers: string[];
  /** The receipt entry to append (readBy = readers). */
  entry: NewEntry;
}

/**
 * For each read message found in the inbox whose reader set grows, the receipt entry carrying
 * all readers. `byAppinfo` names the inbox owner's own messages (a receipt goes to the sender,
 * whose inbox this is). Messages not in the inbox, and sets that do not grow, need nothing.
 */
export async function planReceipts(
  timeline: TimelineStore,
  inbox: InboxKey,
  byAppinfo: ReadonlyMap<string, string[]>,
  now: number,
  logger: Logger,
): Promise<ReceiptPlan[]> {
  const sender = splitKey(inbox).id;
  const keys = [...byAppinfo.keys()].map((appinfo) => messageKey(sender, appinfo));
  const found = await timeline.findSeqs({ inbox, keys });
  const plans = await Promise.all(
    [...byAppinfo].map(async ([appinfo, readers]) => {
      const seq = found.get(messageKey(sender, appinfo));
      if (seq === undefined) return undefined;
      const [current, original] = await Promise.all([timeline.getReaders({ inbox, seq }), timeline.getEntry({ inbox, seq })]);
      const merged = mergeReaders(current, readers);
      if (!merged.grew) return undefined;
      if (!original) {
        logger.warn({ inbox, appinfo, seq }, 'receipt target indexed but entry missing');
        return undefined;
      }
      return { seq, readers: merged.readers, entry: buildReceiptEntry(seq, merged.readers, original, now) };
    }),
  );
  return plans.filter((p) => p !== undefined);
}
