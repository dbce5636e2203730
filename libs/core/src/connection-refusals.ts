/**
 * The one rule for a connection's refused frames (docs/protocol.md, "Limits on a connection"):
 * what each frame charges its socket, and when the socket is closed and its user held. Pure:
 * the gateway feeds it one event per frame and acts on the verdict.
 *
 * Two limits close a socket — a streak of undecodable frames, and an allowance of refusals
 * spent — and both lead to the same hold of the same length: a sender gains nothing by
 * choosing which limit to hit.
 */

/** Bytes one rate-limit token pays for, beyond the first. */
export const BYTES_PER_TOKEN = 4096;

/** Rate-limit tokens of a frame: 1 + floor(bytes / 4096), valid or not (a 64 KiB frame costs 17). */
export function frameCost(bytes: number): number {
  return 1 + (Number.isFinite(bytes) && bytes > 0 ? Math.floor(bytes / BYTES_PER_TOKEN) : 0);
}

/**
 * What one frame of a socket came to, as far as refusals go:
 * - `decoded`: read, and a valid request;
 * - `undecodable`: read (every byte parsed) and not a request: answered BAD_REQUEST;
 * - `refused`: answered RATE_LIMITED without being served (over the rate, or its user held).
 */
export type FrameEventKind = 'decoded' | 'undecodable' | 'refused';

export interface FrameEvent {
  kind: FrameEventKind;
  /** The frame's size. */
  bytes: number;
}

export interface FrameCharge {
  /** Refusal units the event spends from the socket's allowance, by frame size. */
  units(bytes: number): number;
  /** What it does to the streak of undecodable frames in a row. */
  streak: 'reset' | 'extend' | 'keep';
}

/** The charge table: every event's price, in one place. */
export const FRAME_CHARGES: Readonly<Record<FrameEventKind, Readonly<FrameCharge>>> = Object.freeze({
  decoded: { units: () => 0, streak: 'reset' },
  // It was read and parsed: its size is what it cost (a 64 KiB one spends 17).
  undecodable: { units: frameCost, streak: 'extend' },
  // Refused unread: the read is all it cost.
  refused: { units: () => 1, streak: 'keep' },
});

export interface RefusalLimits {
  /** Undecodable frames in a row tolerated; the next one closes the socket. */
  maxConsecutiveBadFrames: number;
  /** The allowance: refusal units a socket may spend at once (`burst`), coming back at `perSecond`. */
  refusalAllowance: { burst: number; perSecond: number };
  /** How long the user of a socket closed by this rule is held (0: closed, not held). */
  holdMs: number;
}

/** The close reasons of the rule, as the close frame carries them. */
export const REFUSAL_CLOSE_REASONS = Object.freeze({
  streak: 'too many bad frames',
  allowance: 'too many refused frames',
} as const);

export type RefusalCloseReason = (typeof REFUSAL_CLOSE_REASONS)[keyof typeof REFUSAL_CLOSE_REASONS];

export type RefusalVerdict =
  | { action: 'continue' }
  /** Close the socket (1008, `reason`) and hold its user for `holdMs`. */
  | { action: 'close-and-hold'; reason: RefusalCloseReason; holdMs: number };

/** A socket's standing: its streak of undecodable frames and its allowance as of `updatedAt`. */
export interface RefusalState {
  readonly badStreak: number;
  readonly allowance: number;
  readonly updatedAt: number;
}

export function initialRefusalState(limits: RefusalLimits, now: number): RefusalState {
  return { badStreak: 0, allowance: limits.refusalAllowance.burst, updatedAt: now };
}

const CONTINUE: RefusalVerdict = Object.freeze({ action: 'continue' });

/**
 * Charges one frame event at `now` (epoch ms). The allowance refills at `perSecond` up to
 * `burst`; a clock that steps back refills nothing. The streak is checked first, so a socket
 * over both limits is closed for its streak.
 */
export function chargeFrame(
  state: RefusalState,
  event: FrameEvent,
  limits: RefusalLimits,
  now: number,
): { state: RefusalState; verdict: RefusalVerdict } {
  const { burst, perSecond } = limits.refusalAllowance;
  const charge = FRAME_CHARGES[event.kind];
  const elapsed = Math.max(0, now - state.updatedAt);
  const allowance = Math.min(burst, state.allowance + (elapsed * perSecond) / 1000);
  const updatedAt = Math.max(now, state.updatedAt);
  const badStreak = charge.streak === 'reset' ? 0 : charge.streak === 'extend' ? state.badStreak + 1 : state.badStreak;
  const units = charge.units(event.bytes);
  if (badStreak > limits.maxConsecutiveBadFrames) {
    return { state: { badStreak, allowance, updatedAt }, verdict: closeAndHold(REFUSAL_CLOSE_REASONS.streak, limits) };
  }
  if (allowance < units) {
    return { state: { badStreak, allowance, updatedAt }, verdict: closeAndHold(REFUSAL_CLOSE_REASONS.allowance, limits) };
  }
  return { state: { badStreak, allowance: allowance - units, updatedAt }, verdict: CONTINUE };
}

function closeAndHold(reason: RefusalCloseReason, limits: RefusalLimits): RefusalVerdict {
  return { action: 'close-and-hold', reason, holdMs: Math.max(0, limits.holdMs) };
}
