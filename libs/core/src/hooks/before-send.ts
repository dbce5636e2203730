/**
 * The before-send hook's rules (docs/protocol.md, "Before send"): what a valid answer is, and
 * what a send becomes when the hook cannot give one. Pure: the call itself is messaging's.
 */
import type { Json } from '../entry.ts';
import { InternalError, OverloadedError, type SeqlineError } from '../errors.ts';
import type { BeforeSendDecision, HookFailureMode } from './types.ts';

/** Longest `reason` a deny may carry: it is shown to the sender, so it stays a sentence. */
export const MAX_DENY_REASON_LENGTH = 1024;

/**
 * A before-send answer that is not a decision (not JSON, wrong shape, a rewrite the protocol
 * refuses). Fail-closed, the send gets it as INTERNAL: the app's hook, not the client, is wrong.
 * The message names the problem, never the hook's values.
 */
export class InvalidHookAnswerError extends InternalError {
  constructor(problem: string) {
    super(`before-send hook gave an invalid answer: ${problem}`);
  }
}

/** Fail-closed when the hook gives no answer: OVERLOADED, so clients retry with the same appinfo. */
export function hookUnavailableError(cause?: unknown): OverloadedError {
  return new OverloadedError('before-send hook unavailable', { cause });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks a hook's answer text: `{"allow": true}`, `{"allow": true, "body": …}` (a rewrite;
 * `body` present, even null, means rewrite) or `{"allow": false, "reason": "…"}`. A rewritten
 * body must pass `checkBody`, the protocol's own rule for a sent body (size, depth, Unicode),
 * passed in so it has one home. Other fields are ignored. Throws InvalidHookAnswerError.
 */
export function parseBeforeSendAnswer(text: string, checkBody: (body: Json) => SeqlineError | null): BeforeSendDecision {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new InvalidHookAnswerError('not JSON');
  }
  if (!isObject(answer)) throw new InvalidHookAnswerError('not a JSON object');
  if (typeof answer.allow !== 'boolean') throw new InvalidHookAnswerError('allow: not true or false');
  if (!answer.allow) {
    const reason = answer.reason;
    if (typeof reason !== 'string' || reason.length > MAX_DENY_REASON_LENGTH) {
      throw new InvalidHookAnswerError(`reason: not a string of at most ${MAX_DENY_REASON_LENGTH} characters`);
    }
    return { allow: false, reason };
  }
  if (!Object.hasOwn(answer, 'body')) return { allow: true };
  // JSON.parse made it, so it is JSON; the protocol decides whether a sender could have sent it.
  const body = answer.body as Json;
  const refused = checkBody(body);
  if (refused) throw new InvalidHookAnswerError(`rewritten body refused (${refused.code}: ${refused.message})`);
  return { allow: true, body };
}

/**
 * What a send does when the hook failed (`failure`: no answer, non-2xx, or an invalid one):
 * `open` stores the body as sent (returns undefined); `closed` throws — the invalid answer's own
 * INTERNAL error, or OVERLOADED for everything else.
 */
export function onBeforeSendFailure(mode: HookFailureMode, failure: unknown): undefined {
  if (mode === 'open') return undefined;
  if (failure instanceof InvalidHookAnswerError) throw failure;
  throw hookUnavailableError(failure);
}
