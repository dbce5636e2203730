/** SeqlineClient.send's exactly-once send: one appinfo for every attempt, the server's outcome. */
import { v7 as uuidv7 } from 'uuid';
import type { SendInput, SendOutcome } from './client-options.ts';
import { withResends, type ResendPolicy } from './resend.ts';
import type { OpArgs, OpResult } from './wire.ts';

/**
 * Sends a message, exactly once: an unanswered attempt (timeout, disconnect) is resent with
 * the same appinfo, which the server stores at most once (`duplicate: true` then).
 */
export async function sendOnce(
  request: (args: OpArgs<'send'>) => Promise<OpResult<'send'>>,
  resendPolicy: ResendPolicy,
  input: SendInput,
): Promise<SendOutcome> {
  const appinfo = input.appinfo ?? uuidv7();
  const args: OpArgs<'send'> = { appinfo, to: input.to, type: input.type, body: input.body };
  if (input.mentions !== undefined) args.mentions = input.mentions;
  const r = await withResends(() => request(args), resendPolicy, { appinfo });
  const outcome: SendOutcome = { seq: r.seq, sendTime: r.sendTime, duplicate: r.duplicate, appinfo };
  if (r.body !== undefined) outcome.body = r.body;
  return outcome;
}
