/**
 * Delivery of an offline notification (docs/protocol.md, "Offline notifications"): one job per
 * window, made by the OfflineNotifier at the inbox owner, run by any worker. The tenant's hooks
 * are read now, not when the window closed: a notifyUrl removed meanwhile completes the job
 * without a call, and previews are sent only if the tenant still allows them. The badge is
 * counted now too, so it is the user's unread when the app is told.
 */
import { CONVERSATIONS_MAX_LIMIT, type NotifyItem, type NotifyPayload } from '@seqline/core';
import { deliverHook } from '@seqline/hooks';
import { conversations } from './conversation-ops.ts';
import type { MessagingEnv, MessagingHooks, MessagingStores } from './deps.ts';
import type { OfflineNotifyJob } from './queues.ts';

/** How long one notify call may take before it counts as failed (and is retried). */
export const OFFLINE_NOTIFY_TIMEOUT_MS = 10_000;
/**
 * Conversation-list pages read for a badge, CONVERSATIONS_MAX_LIMIT (500) each: the badge sums
 * the unread of the user's 2 000 most recent conversations; older ones are left out.
 */
export const BADGE_MAX_PAGES = 4;

export type BadgeDeps = { stores: Pick<MessagingStores, 'conversations' | 'groups' | 'groupStreams'> };

/** The user's total unread as the `conversations` op reports it (over at most BADGE_MAX_PAGES pages). */
export async function unreadBadge(d: BadgeDeps, tenant: string, user: string): Promise<number> {
  let badge = 0;
  let beforeLastSeq: number | undefined;
  for (let page = 0; page < BADGE_MAX_PAGES; page++) {
    const listed = await conversations(
      d,
      { tenant, user },
      { limit: CONVERSATIONS_MAX_LIMIT, lastMessages: 0, ...(beforeLastSeq !== undefined && { beforeLastSeq }) },
    );
    for (const { state } of listed.convs) badge += state.unread;
    const last = listed.convs[listed.convs.length - 1];
    if (!listed.hasMore || last === undefined) break;
    beforeLastSeq = last.state.lastSeq;
  }
  return badge;
}

export type OfflineNotifyRunDeps = BadgeDeps & { hooks: MessagingHooks; env: Pick<MessagingEnv, 'logger'> };

/** Posts one notification; any failure (unreachable, timeout, non-2xx) throws, so the queue retries it. */
export async function runOfflineNotify(
  d: OfflineNotifyRunDeps,
  job: OfflineNotifyJob,
  timeoutMs: number = OFFLINE_NOTIFY_TIMEOUT_MS,
): Promise<void> {
  const hooks = d.hooks.of(job.tenant);
  if (hooks.notifyUrl === undefined) {
    d.env.logger.info({ tenant: job.tenant, user: job.user }, 'notify URL removed: job completed without a call');
    return;
  }
  const entries: NotifyItem[] = hooks.notifyPreview ? job.entries : job.entries.map(withoutPreview);
  const payload: NotifyPayload = {
    type: 'notify',
    tenant: job.tenant,
    user: job.user,
    badge: await unreadBadge(d, job.tenant, job.user),
    entries,
  };
  await deliverHook(d.hooks.transport, {
    url: hooks.notifyUrl,
    secret: hooks.secret,
    body: JSON.stringify(payload),
    timeoutMs,
  });
}

function withoutPreview(item: NotifyItem): NotifyItem {
  const { preview: _dropped, ...rest } = item;
  return rest;
}
