/**
 * A resend the store answers with an original written in an earlier term of the inbox's section
 * (by a previous owner, or this process before a restart: its seq is at or below the ceiling this
 * owner claimed) may never have been told. Its writer was deposed or died between the write and
 * the telling: a `kill -9`, or a pause past its lease, after which the fence refuses to tell a
 * write whose answer came late (its successor deletes such a write when it landed late, and keeps
 * it when it landed before the takeover). The resend exists because its sender never heard back,
 * so the owner tells of the original now: its push (prevSeq = the entry stored before it, as
 * every push of an owner names; a client holding it already ignores it) and the append listener
 * (the offline notification). At least once: when the earlier owner did tell it, the user hears
 * of it twice.
 */
import type { Entry, InboxKey, Logger, TimelineReader } from '@seqline/core';
import type { PushPublisher } from './push-publisher.ts';

export interface EarlierTermContext {
  timeline: Pick<TimelineReader, 'getEntry' | 'readBefore'>;
  pushes: Pick<PushPublisher, 'publish'>;
  appended?: (inbox: InboxKey, entries: Entry[]) => void;
  logger: Logger;
}

/** Tells of the originals at `seqs`; never throws (the append's outcome stands whatever happens here). */
export async function tellEarlierTermOriginals(ctx: EarlierTermContext, inbox: InboxKey, seqs: number[]): Promise<void> {
  try {
    const read = await Promise.all([...new Set(seqs)].sort((a, b) => a - b).map((seq) => ctx.timeline.getEntry({ inbox, seq })));
    const originals = read.filter((e): e is Entry => e !== null);
    for (const e of originals) {
      const [before] = await ctx.timeline.readBefore({ inbox, beforeSeq: e.seq, limit: 1 });
      ctx.pushes.publish(inbox, before?.seq ?? 0, [e]);
    }
    if (originals.length > 0) ctx.appended?.(inbox, originals);
  } catch (err) {
    ctx.logger.warn({ inbox, seqs, err }, 'could not tell of the original a resend found (written by an earlier owner)');
  }
}
