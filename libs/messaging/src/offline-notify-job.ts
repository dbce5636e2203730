/**
 * Delivery of an offline notification (docs/protocol.md, "Offline notifications"): one job per
 * window, made by the OfflineNotifier at the inbox owner, run by any worker. The tenant's hooks
 * are read now, not when the window closed: a notifyUrl removed meanwhile completes the job
 * without a call, and previews are sent only if the tenant still allows them. The badge is
 * counted now too (unread-badge.ts), so it is the user's unread when the app is told — and at
 * least every entry the notification names: an index still behind them fails the attempt
 * (BadgeIndexBehindError), which the queue retries.
 */
import type { NotifyItem, NotifyPayload } from '@seqline/core';
import { deliverHook } from '@seqline/hooks';
import type { MessagingEnv, MessagingHooks } from './deps.ts';
import type { OfflineNotifyJob } from './queues.ts';
import { unreadBadge, type BadgeDeps } from './unread-badge.ts';

/** How long one notify call may take before it counts as failed (and is retried). */
export const OFFLINE_NOTIFY_TIMEOUT_MS = 10_000;

export type OfflineNotifyRunDeps = BadgeDeps & { hooks: MessagingHooks; env: Pick<MessagingEnv, 'logger'> };

/** Posts one notification; any failure (index behind, unreachable, timeout, non-2xx) throws, so the queue retries it. */
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
  const newest = Math.max(...job.entries.map((e) => e.seq));
  const { badge, capped } = await unreadBadge(d, job.tenant, job.user, newest);
  const payload: NotifyPayload = {
    type: 'notify',
    tenant: job.tenant,
    user: job.user,
    badge,
    ...(capped && { badgeCapped: true as const }),
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
