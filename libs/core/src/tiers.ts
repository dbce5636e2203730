/** Group tiers (WeCom): small < 100, large < 2000, huge up to a maximum. */
export type Tier = 'small' | 'large' | 'huge';
export const TIERS: readonly Tier[] = ['small', 'large', 'huge'];

export interface TierThresholds {
  /** A group with fewer members than this is small. */
  smallBelow: number;
  /** A group with fewer members than this (and not small) is large; else huge. */
  largeBelow: number;
  /** No group may have more members than this. */
  maxMembers: number;
  /** Fraction below a threshold a shrinking group must fall before it moves down a tier. */
  hysteresis: number;
}

export const DEFAULT_TIER_THRESHOLDS: TierThresholds = {
  smallBelow: 100,
  largeBelow: 2000,
  maxMembers: 10_000,
  hysteresis: 0.1,
};
