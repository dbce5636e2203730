/** Fanout planning: which tier a group is in, and how its messages are fanned out. */
import { BadRequestError } from './errors.ts';
import type { Tier, TierThresholds } from './tiers.ts';

/** Hard ceiling on any configured group size; the admin CLI cannot go past it. */
export const MAX_GROUP_MEMBERS_LIMIT = 100_000;

export type FanoutMode = 'write' | 'read';

const TIER_RANK: Record<Tier, number> = { small: 0, large: 1, huge: 2 };

export function tierRank(tier: Tier): number {
  return TIER_RANK[tier];
}

/** The tier a group of this size has without history (no hysteresis). */
export function naturalTier(memberCount: number, t: TierThresholds): Tier {
  if (memberCount < t.smallBelow) return 'small';
  if (memberCount < t.largeBelow) return 'large';
  return 'huge';
}

/**
 * Member count a shrinking group must fall *below* to leave the tier above `threshold`.
 * Counts are integers, so `n < x` is the same as `n < ceil(x)`; the epsilon absorbs float
 * noise (100 * (1 - 0.07) is 93.00000000000001, which must still mean 93).
 */
export function shrinkBelow(threshold: number, hysteresis: number): number {
  return Math.ceil(threshold * (1 - hysteresis) - 1e-9);
}

/**
 * Tier after a membership change. Growing is immediate (thresholds used directly); shrinking
 * steps down one tier at a time, each step only when the count is below that tier's lower
 * threshold reduced by the hysteresis — so a group hovering around 100 does not flap between
 * write- and read-heavy plans, and a huge group at 1900 stays huge (not large, not small).
 */
export function tierFor(memberCount: number, current: Tier | undefined, t: TierThresholds): Tier {
  if (!Number.isSafeInteger(memberCount) || memberCount < 0) {
    throw new BadRequestError(`member count must be a non-negative integer, got ${memberCount}`);
  }
  const natural = naturalTier(memberCount, t);
  if (current === undefined || TIER_RANK[natural] >= TIER_RANK[current]) return natural;

  let tier: Tier = current;
  if (tier === 'huge' && memberCount < shrinkBelow(t.largeBelow, t.hysteresis)) tier = 'large';
  if (tier === 'large' && memberCount < shrinkBelow(t.smallBelow, t.hysteresis)) tier = 'small';
  return tier;
}

/** Huge groups use read-fanout (one copy in the group stream) when it is enabled. */
export function fanoutModeFor(tier: Tier, readFanoutEnabled: boolean): FanoutMode {
  return tier === 'huge' && readFanoutEnabled ? 'read' : 'write';
}

/** Refuses a group (create or add) that would exceed the configured maximum size. */
export function assertGroupSize(memberCount: number, t: TierThresholds): void {
  if (memberCount > t.maxMembers) {
    throw new BadRequestError(`group would have ${memberCount} members; the maximum is ${t.maxMembers}`);
  }
}

function isPositiveInt(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0;
}

/**
 * Checks thresholds set by the admin CLI: 0 < smallBelow < largeBelow <= maxMembers <= 100 000
 * (all integers) and 0 <= hysteresis < 1. Returns a clean copy holding only the known fields.
 */
export function validateThresholds(t: TierThresholds): TierThresholds {
  const { smallBelow, largeBelow, maxMembers, hysteresis } = t;
  if (!isPositiveInt(smallBelow)) throw new BadRequestError(`smallBelow must be a positive integer, got ${smallBelow}`);
  if (!isPositiveInt(largeBelow)) throw new BadRequestError(`largeBelow must be a positive integer, got ${largeBelow}`);
  if (!isPositiveInt(maxMembers)) throw new BadRequestError(`maxMembers must be a positive integer, got ${maxMembers}`);
  if (!(smallBelow < largeBelow)) {
    throw new BadRequestError(`smallBelow (${smallBelow}) must be below largeBelow (${largeBelow})`);
  }
  if (!(largeBelow <= maxMembers)) {
    throw new BadRequestError(`largeBelow (${largeBelow}) must not exceed maxMembers (${maxMembers})`);
  }
  if (maxMembers > MAX_GROUP_MEMBERS_LIMIT) {
    throw new BadRequestError(`maxMembers (${maxMembers}) must not exceed ${MAX_GROUP_MEMBERS_LIMIT}`);
  }
  if (typeof hysteresis !== 'number' || !Number.isFinite(hysteresis) || hysteresis < 0 || hysteresis >= 1) {
    throw new BadRequestError(`hysteresis must be in [0, 1), got ${hysteresis}`);
  }
  return { smallBelow, largeBelow, maxMembers, hysteresis };
}

/** Splits items into batches of at most `size` (batched inserts, bounded fanout steps). */
export function chunk<T>(items: T[], size: number): T[][] {
  if (!isPositiveInt(size)) throw new BadRequestError(`chunk size must be a positive integer, got ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
