/**
 * The second half of InboxWriter.appendThen, shared by the embedded owner, the shard owners of
 * distributed mode and the remote writer's fallback: one rule for when a follow-up runs and
 * how long it is waited for.
 */
import type { AppendOutcome, FollowUpAppend, FollowUpResult, InboxKey, Logger, NewEntry } from '@seqline/core';

export type AppendFn = (inbox: InboxKey, entries: NewEntry[]) => Promise<AppendOutcome[]>;

/**
 * Runs `next` through `append` when every one of `outcomes` is new; a duplicate means a resend,
 * whose follow-up the caller builds from the stored original instead. A follow-up slower than
 * `next.timeoutMs` is reported failed but not cancelled: it may still land, idempotently.
 */
export async function runFollowUp(outcomes: readonly AppendOutcome[], next: FollowUpAppend, append: AppendFn, logger: Logger): Promise<FollowUpResult> {
  if (outcomes.some(isDuplicate)) return 'skipped';
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<FollowUpResult>((resolve) => { timer = setTimeout(resolve, next.timeoutMs, 'failed'); });
  try {
    return await Promise.race([append(next.inbox, next.entries).then(appended), timeout]);
  } catch (err) {
    logger.warn({ err, inbox: next.inbox }, 'follow-up append failed');
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
}

const isDuplicate = (o: AppendOutcome): boolean => o.duplicate;
const appended = (): FollowUpResult => 'appended';
