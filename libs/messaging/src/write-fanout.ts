/** Write-fanout of a batch of jobs: one append per recipient inbox, whatever the batch size. */
import { convForRecipient, inboxKey, type InboxKey, type InboxWriter, type NewEntry } from '@seqline/core';
import pLimit from 'p-limit';
import type { FanoutJob } from './queues.ts';

export interface FanoutCounters {
  /** InboxWriter.append calls made. */
  appends: number;
  /** Entries written through them (appends < entries means inserts were merged). */
  entries: number;
}

/**
 * The merged insert: every recipient's entries from all jobs of the batch, in job order, go to
 * its inbox as ONE append (one seq allocation, one store write, one push). Recipient lists
 * may differ between jobs (each is the snapshot of its own send), so each inbox gets exactly
 * the jobs that name it.
 */
export async function runMergedFanout(
  writer: InboxWriter,
  jobs: readonly FanoutJob[],
  appendConcurrency: number,
  counters?: FanoutCounters,
): Promise<void> {
  const perInbox = new Map<InboxKey, NewEntry[]>();
  for (const job of jobs) {
    // 1:1: each recipient's copy names the sender as the other party (the sender's copy names the recipient).
    const entry: NewEntry =
      job.entry.conv.type === 'user' ? { ...job.entry, conv: convForRecipient(job.entry.conv, job.entry.from) } : job.entry;
    for (const user of job.recipients) {
      const inbox = inboxKey(job.tenant, user);
      const list = perInbox.get(inbox);
      if (list) list.push(entry);
      else perInbox.set(inbox, [entry]);
    }
  }
  const limit = pLimit(appendConcurrency);
  await Promise.all(
    [...perInbox].map(([inbox, entries]) =>
      limit(async () => {
        await writer.append({ inbox, entries });
        if (counters) {
          counters.appends++;
          counters.entries += entries.length;
        }
      }),
    ),
  );
}
