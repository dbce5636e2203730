/**
 * Membership windows (I5): a member reads a group stream only within the stretches it was a
 * member — joined after → sees from join; removed → sees up to removal; re-joined → a new
 * window. These are pure transitions; stores persist their results.
 */
import { BadRequestError } from './errors.ts';
import type { MemberWindow, Membership, MembershipChangeAt } from './group-ports.ts';

export interface GseqRange {
  /** Exclusive lower bound. */
  after: number;
  /** Inclusive upper bound; Infinity for an open window. */
  upTo: number;
}

/** A window is open while it has neither closing mark (closeWindow always sets both). */
export function isOpenWindow(w: MemberWindow): boolean {
  return w.removedAt === undefined && w.toGseq === undefined;
}

export function isCurrentMember(m: Membership | null): boolean {
  return m !== null && m.windows.some(isOpenWindow);
}

/**
 * Admin powers follow the current role and membership, checked when used: the group's admin
 * who has left the group has none (not even over messages sent while they were admin).
 */
export function actsAsGroupAdmin(groupAdmin: string | undefined, user: string, m: Membership | null): boolean {
  return groupAdmin === user && isCurrentMember(m);
}

/** Whether group-stream entry `gseq` falls in one of the member's windows. */
export function canReadGseq(m: Membership | null, gseq: number): boolean {
  if (m === null) return false;
  return m.windows.some((w) => w.fromGseq < gseq && gseq <= (w.toGseq ?? Infinity));
}

/**
 * Whether one window holds every gseq in [first, last]: a sufficient test (no allocation) that
 * the member may read a whole run of stream entries. False does not mean it may read none.
 */
export function readsWholeGseqRange(m: Membership | null, first: number, last: number): boolean {
  if (m === null) return false;
  for (const w of m.windows) if (w.fromGseq < first && last <= (w.toGseq ?? Infinity)) return true;
  return false;
}

/**
 * The gseq ranges the member may read, ascending, non-empty, and merged where they touch
 * (leaving and re-joining with no message in between is one range) — fewer reads for paging.
 */
export function visibleRange(m: Membership | null): GseqRange[] {
  if (m === null) return [];
  const ranges = m.windows
    .map((w) => ({ after: w.fromGseq, upTo: w.toGseq ?? Infinity }))
    .filter((r) => r.upTo > r.after)
    .sort((a, b) => a.after - b.after);
  const merged: GseqRange[] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last !== undefined && r.after <= last.upTo) last.upTo = Math.max(last.upTo, r.upTo);
    else merged.push({ ...r });
  }
  return merged;
}

/** Whether the user was a member at `time` (joinedAt <= time < removedAt). */
export function wasMemberAt(m: Membership | null, time: number): boolean {
  if (m === null) return false;
  return m.windows.some((w) => w.joinedAt <= time && time < (w.removedAt ?? Infinity));
}

function assertChangeAt(at: MembershipChangeAt): void {
  if (!Number.isFinite(at.time)) throw new BadRequestError(`membership change time must be finite, got ${at.time}`);
  if (!Number.isSafeInteger(at.gseq) || at.gseq < 0) {
    throw new BadRequestError(`membership change gseq must be a non-negative integer, got ${at.gseq}`);
  }
}

/**
 * Joins `user`: a new open window from `at`. No-op (returns `m` itself, so callers can test
 * identity) when already a member. The window starts no earlier than the end of the previous
 * one: a stale head read or a skewed clock must not make windows overlap or run backwards.
 */
export function openWindow(m: Membership | null, user: string, at: MembershipChangeAt): Membership {
  if (m !== null && m.user !== user) {
    throw new BadRequestError(`membership of ${m.user} cannot be opened for ${user}`);
  }
  assertChangeAt(at);
  if (m !== null && isCurrentMember(m)) return m;
  const previous = m?.windows ?? [];
  let fromGseq = at.gseq;
  let joinedAt = at.time;
  for (const w of previous) {
    fromGseq = Math.max(fromGseq, w.toGseq ?? w.fromGseq);
    joinedAt = Math.max(joinedAt, w.removedAt ?? w.joinedAt);
  }
  return { user, windows: [...previous.map((w) => ({ ...w })), { joinedAt, fromGseq }] };
}

/**
 * Removes the member: closes the open window at `at`. No-op (returns `m` itself) when not a
 * member. A window never inverts: its end is clamped to its start.
 */
export function closeWindow(m: Membership, at: MembershipChangeAt): Membership;
export function closeWindow(m: Membership | null, at: MembershipChangeAt): Membership | null;
export function closeWindow(m: Membership | null, at: MembershipChangeAt): Membership | null {
  assertChangeAt(at);
  if (m === null || !isCurrentMember(m)) return m;
  const windows = m.windows.map((w): MemberWindow => {
    if (!isOpenWindow(w)) return { ...w };
    return {
      ...w,
      removedAt: Math.max(at.time, w.joinedAt),
      toGseq: Math.max(at.gseq, w.fromGseq),
    };
  });
  return { user: m.user, windows };
}
