/**
 * The before-send hook (docs/protocol.md, "Before send"): the app's service allows, rewrites or
 * refuses a message before the sender's copy is stored. The answer's rules and the failure
 * modes are core's (hooks/before-send.ts); the body rules are the protocol's, so a rewrite can
 * store nothing a sender could not have sent.
 */
import {
  ForbiddenError,
  inboxKey,
  messageKey,
  onBeforeSendFailure,
  parseBeforeSendAnswer,
  type BeforeSendDecision,
  type BeforeSendPayload,
  type Json,
  type SeqlineError,
} from '@seqline/core';
import { deliverHook } from '@seqline/hooks';
import { parseOpArgs } from '@seqline/protocol';
import type { Caller, SendInput } from './api.ts';
import type { MessagingEnv, MessagingHooks, MessagingStores } from './deps.ts';

export type BeforeSendDeps = {
  stores: Pick<MessagingStores, 'timeline'>;
  hooks: MessagingHooks;
  env: Pick<MessagingEnv, 'logger'>;
};

/** The body to store, and whether the hook rewrote it (the send's reply then carries it). */
export interface BodyToStore {
  body: Json;
  rewritten: boolean;
}

/**
 * Asks the tenant's before-send hook, when one is set. Throws FORBIDDEN (a deny, with its
 * reason) or, fail-closed, the failure's typed error; fail-open stores the body as sent.
 */
export async function beforeSend(d: BeforeSendDeps, caller: Caller, input: SendInput): Promise<BodyToStore> {
  const asSent: BodyToStore = { body: input.body, rewritten: false };
  const hooks = d.hooks.of(caller.tenant);
  const url = hooks.beforeSendUrl;
  if (url === undefined) return asSent;
  // A resend of a stored message was allowed once already: its append answers duplicate with
  // the original. (A denied message was never stored, so its resend asks again.)
  const own = messageKey(caller.user, input.appinfo);
  if ((await d.stores.timeline.findSeqs({ inbox: inboxKey(caller.tenant, caller.user), keys: [own] })).has(own)) return asSent;
  const payload: BeforeSendPayload = {
    type: 'before_send',
    tenant: caller.tenant,
    from: caller.user,
    to: input.to,
    appinfo: input.appinfo,
    msgType: input.type,
    body: input.body,
  };
  let decision: BeforeSendDecision;
  try {
    const res = await deliverHook(d.hooks.transport, {
      url,
      secret: hooks.secret,
      body: JSON.stringify(payload),
      timeoutMs: hooks.beforeSendTimeoutMs,
    });
    decision = parseBeforeSendAnswer(res.body, (body) => sendableBodyError(input, body));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    d.env.logger.warn({ tenant: caller.tenant, appinfo: input.appinfo, mode: hooks.beforeSendFailure, why }, 'before-send hook failed');
    onBeforeSendFailure(hooks.beforeSendFailure, err);
    return asSent;
  }
  if (!decision.allow) throw new ForbiddenError(decision.reason === '' ? 'refused by the before-send hook' : decision.reason);
  // parseBeforeSendAnswer checked the rewrite with the protocol's rules: it is a sendable Json body.
  return 'body' in decision ? { body: decision.body as Json, rewritten: true } : asSent;
}

/** Whether the protocol would accept this body in the same send (every rule send's validation has). */
function sendableBodyError(input: SendInput, body: Json): SeqlineError | null {
  const args: Record<string, unknown> = { appinfo: input.appinfo, to: input.to, type: input.type, body };
  if (input.mentions !== undefined) args.mentions = input.mentions;
  const parsed = parseOpArgs('send', args);
  return parsed.ok ? null : parsed.error;
}
