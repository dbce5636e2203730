/**
 * What a WebSocket frame costs its sender, decided before the frame is decoded: decoding (UTF-8,
 * JSON) is the expensive part, so a sender over its rate must be refused without it. The costs
 * and the refusal rule are core's (connection-refusals.ts); this file holds a socket's side.
 */
import {
  chargeFrame,
  initialRefusalState,
  systemClock,
  type Clock,
  type FrameEventKind,
  type RefusalCloseReason,
  type RefusalLimits,
  type RefusalState,
  type RefusalVerdict,
} from '@seqline/core';

/**
 * The request id of a frame that is refused unread, when `{"id": n` leads it (as every client
 * writes it); null otherwise. Looks at the first 40 bytes only.
 */
export function leadingRequestId(data: ArrayBuffer | Buffer): number | null {
  const view = data instanceof ArrayBuffer ? new Uint8Array(data, 0, Math.min(40, data.byteLength)) : data.subarray(0, 40);
  const prefix = Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('latin1');
  const match = /^\s*\{\s*"id"\s*:\s*(-?\d{1,16})\s*[,}]/.exec(prefix);
  if (match?.[1] === undefined) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : null;
}

/** The forced-close metric (`reason` label) of each close the refusal rule decides. */
export const REFUSAL_CLOSE_METRICS: Readonly<Record<RefusalCloseReason, string>> = Object.freeze({
  'too many bad frames': 'bad_frames',
  'too many refused frames': 'refused_frames',
});

/** One socket's standing under the refusal rule: the state carried from frame to frame. */
export class SocketRefusals {
  private state: RefusalState;

  constructor(
    private readonly limits: RefusalLimits,
    private readonly clock: Clock = systemClock,
  ) {
    this.state = initialRefusalState(limits, clock.now());
  }

  /** Charges one frame of `bytes`; the verdict says whether the socket goes on or is closed and its user held. */
  charge(kind: FrameEventKind, bytes: number): RefusalVerdict {
    const charged = chargeFrame(this.state, { kind, bytes }, this.limits, this.clock.now());
    this.state = charged.state;
    return charged.verdict;
  }
}
