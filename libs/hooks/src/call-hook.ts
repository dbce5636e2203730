import { HookRejectedError, type HookCall, type HookResponse, type HookTransport } from '@seqline/core';

/** A call that must be acknowledged (notify, after-send): any non-2xx throws, so the queue retries. */
export async function deliverHook(transport: HookTransport, call: HookCall): Promise<HookResponse> {
  const res = await transport.post(call);
  if (res.status < 200 || res.status > 299) throw new HookRejectedError(res.status);
  return res;
}
