/**
 * The after-send event stream (docs/protocol.md, "After send"): every stored message goes to the
 * tenant's `afterSendUrl` once it is stored, through a durable job enqueued before the send is
 * acknowledged — so an acknowledged message reaches the app at least once, whatever crashes,
 * with the queue's retries and dead-letter. Keyed by appinfo: a resend re-enqueues the same id.
 */
import { afterSendJobId, type AfterSendPayload, type NewEntry, type WorkQueue } from '@seqline/core';
import { deliverHook } from '@seqline/hooks';
import type { MessagingEnv, MessagingHooks } from './deps.ts';
import { AFTER_SEND_QUEUE, toJson, type AfterSendJob } from './queues.ts';

/** How long one after-send call may take before it counts as failed (and is retried). */
export const AFTER_SEND_TIMEOUT_MS = 10_000;

export type AfterSendEnqueueDeps = { queue: WorkQueue; hooks: Pick<MessagingHooks, 'of'> };

/**
 * Persists the after-send job of the sender's copy `entry` (stored at `seq`), when the tenant
 * has an after-send URL now. Idempotent by id while the job is pending.
 */
export async function enqueueAfterSend(d: AfterSendEnqueueDeps, tenant: string, seq: number, entry: NewEntry): Promise<void> {
  if (d.hooks.of(tenant).afterSendUrl === undefined) return;
  const job: AfterSendJob = {
    tenant,
    from: entry.from,
    to: entry.conv.type === 'group' ? { group: entry.conv.id } : { user: entry.conv.id },
    appinfo: entry.appinfo,
    seq,
    sendTime: entry.sendTime,
    msgType: entry.type ?? '',
    body: entry.body ?? null,
  };
  await d.queue.enqueue({
    queue: AFTER_SEND_QUEUE,
    id: afterSendJobId({ tenant, sender: entry.from, appinfo: entry.appinfo }),
    payload: toJson(job),
  });
}

export type AfterSendRunDeps = { hooks: MessagingHooks; env: Pick<MessagingEnv, 'logger'> };

/**
 * Delivers one job. The settings are read now, not at send time: a URL removed meanwhile
 * completes the job without a call. Any failure (unreachable, timeout, non-2xx) throws, so the
 * queue retries it and, past its window, dead-letters it.
 */
export async function runAfterSend(d: AfterSendRunDeps, job: AfterSendJob): Promise<void> {
  const hooks = d.hooks.of(job.tenant);
  if (hooks.afterSendUrl === undefined) {
    d.env.logger.info({ tenant: job.tenant, appinfo: job.appinfo }, 'after-send URL removed: job completed without a call');
    return;
  }
  const payload: AfterSendPayload = {
    type: 'after_send',
    tenant: job.tenant,
    from: job.from,
    to: job.to,
    appinfo: job.appinfo,
    seq: job.seq,
    sendTime: job.sendTime,
    msgType: job.msgType,
    body: job.body,
  };
  await deliverHook(d.hooks.transport, {
    url: hooks.afterSendUrl,
    secret: hooks.secret,
    body: JSON.stringify(payload),
    timeoutMs: AFTER_SEND_TIMEOUT_MS,
  });
}
