/**
 * HookTransport over HTTP (Node's fetch): one POST per call, signed when the tenant has a
 * secret, bounded by the call's timeout, the answer read up to a size bound. Never follows a
 * redirect (a hook URL is configured exactly; a redirect could leak the signed body elsewhere).
 * deliverHook makes any transport's non-2xx answer a failure.
 */
import {
  HookRejectedError,
  HookUnreachableError,
  systemClock,
  type Clock,
  type HookCall,
  type HookResponse,
  type HookTransport,
} from '@seqline/core';
import { hookSignatureHeaders } from './signature.ts';

export interface HttpHookTransportOptions {
  /** Most bytes of an answer read (an allow/deny answer is small). Default 256 KiB. */
  maxResponseBytes?: number;
  clock?: Clock;
}

export function createHttpHookTransport(options: HttpHookTransportOptions = {}): HookTransport {
  const maxBytes = options.maxResponseBytes ?? 256 * 1024;
  const clock = options.clock ?? systemClock;
  return {
    async post(call: HookCall): Promise<HookResponse> {
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'seqline-hooks/1' };
      if (call.secret !== undefined) Object.assign(headers, hookSignatureHeaders(call.secret, clock.now(), call.body));
      const signal = AbortSignal.timeout(call.timeoutMs);
      let res: Response;
      try {
        res = await fetch(call.url, { method: 'POST', headers, body: call.body, redirect: 'manual', signal });
      } catch (err) {
        throw new HookUnreachableError(signal.aborted ? `no answer within ${call.timeoutMs} ms` : 'hook unreachable', { cause: err });
      }
      try {
        return { status: res.status, body: await readBounded(res, maxBytes) };
      } catch (err) {
        throw new HookUnreachableError(signal.aborted ? `answer not complete within ${call.timeoutMs} ms` : 'hook answer unreadable', {
          cause: err,
        });
      }
    },
  };
}

/** A call that must be acknowledged (notify, after-send): any non-2xx throws, so the queue retries. */
export async function deliverHook(transport: HookTransport, call: HookCall): Promise<HookResponse> {
  const res = await transport.post(call);
  if (res.status < 200 || res.status > 299) throw new HookRejectedError(res.status);
  return res;
}

/** Reads at most `max` bytes of the body; a longer answer is cut (and then fails to parse). */
async function readBounded(res: Response, max: number): Promise<string> {
  if (res.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const next = (await reader.read()) as { done: boolean; value?: Uint8Array };
    if (next.done || next.value === undefined) break;
    chunks.push(next.value);
    size += next.value.byteLength;
    if (size > max) {
      await reader.cancel(); // the rest is never read
      break;
    }
  }
  return Buffer.concat(chunks)
    .subarray(0, max + 1)
    .toString('utf8');
}
