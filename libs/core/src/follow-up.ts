/**
 * Appends that are waited for only so long: the 1:1 delivery of a send and the follow-up of
 * InboxWriter.appendThen (embedded owner, shard owners, the remote writer's fallback) share one
 * rule for when a follow-up runs and one way of giving up on a slow append.
 */
import type { AppendOutcome, NewEntry } from './entry.ts';
import type { InboxKey } from './ids.ts';
import type { Logger } from './logger.ts';
import type { ChainedAppend, DurableListener, FollowUpAppend, FollowUpResult, InboxAppend } from './ports.ts';

export type AppendFn = (input: InboxAppend) => Promise<AppendOutcome[]>;

/**
 * `append({ inbox, entries })`, waited for at most `timeoutMs`: `failed` when it throws or is late.
 * A late append is not cancelled; callers fall back to something idempotent by appinfo.
 */
export async function appendWithin(
  append: AppendFn,
  inbox: InboxKey,
  entries: NewEntry[],
  timeoutMs: number,
  logger: Logger,
): Promise<'appended' | 'failed'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'failed'>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, 'failed');
  });
  try {
    return await Promise.race([append({ inbox, entries }).then(appended), timeout]);
  } catch (err) {
    logger.warn({ err, inbox }, 'timed append failed; the caller falls back');
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `next` when every one of `outcomes` is new; a duplicate means a resend, whose follow-up
 * the caller builds from the stored original instead.
 */
export function runFollowUp(
  outcomes: readonly AppendOutcome[],
  next: FollowUpAppend,
  append: AppendFn,
  logger: Logger,
): Promise<FollowUpResult> {
  if (outcomes.some(isDuplicate)) return Promise.resolve('skipped');
  return appendWithin(append, next.inbox, next.entries, next.timeoutMs, logger);
}

/**
 * appendThen's order: `append` runs the first append and may report it durable before it
 * resolves (its cache write still to go); the follow-up then starts at that point instead of
 * after the cache write, which takes a Redis round trip off a 1:1 send's delivery. Each inbox's
 * own append still resolves only after its cache write (read-your-writes through the cache).
 */
export async function chainAppends(
  append: (durable: DurableListener) => Promise<AppendOutcome[]>,
  followUp: (outcomes: readonly AppendOutcome[]) => Promise<FollowUpResult>,
): Promise<ChainedAppend> {
  let early: Promise<FollowUpResult> | undefined;
  const outcomes = await append((durable) => {
    if (early !== undefined) return;
    early = followUp(durable);
    early.catch(() => undefined); // awaited below unless the first append throws after all
  });
  return { outcomes, next: await (early ?? followUp(outcomes)) };
}

const isDuplicate = (o: AppendOutcome): boolean => o.duplicate;
const appended = (): 'appended' => 'appended';
