/**
 * Who takes part in a round: online users with one or two devices, offline users (no socket
 * ever: they get notifications, an HTTP poller watches their inbox), and groups of every tier —
 * small and large (write-fanout), huge (read-fanout: a group stream), and a small group whose
 * members come and go. The tier thresholds are lowered for the round so a huge group has 8
 * members, not 2 000.
 */
import type { Rng } from './rng.ts';

/** Live tier settings of the round: small < 4 members, large < 7, huge from 7. */
export const ROUND_TIERS = { smallBelow: 4, largeBelow: 7 } as const;

export interface GroupPlan {
  /** Chosen id, unique per round. */
  id: string;
  tier: 'small' | 'large' | 'huge';
  admin: string;
  members: string[];
  churn?: boolean;
}

export interface RoundPlan {
  online: string[];
  offline: string[];
  /** Devices: `user/dN`. */
  devices: { user: string; dev: string }[];
  groups: GroupPlan[];
  /** Users whose appinfos are a counter (`c1`, `c2`…): two of them send the same appinfos. */
  counterAppinfos: Set<string>;
  /** Users that may be added to and removed from the churn group. */
  churners: string[];
}

export function planRound(rng: Rng, roundTag: string): RoundPlan {
  const online = Array.from({ length: 10 }, (_, i) => `u${i}`);
  const offline = Array.from({ length: 3 }, (_, i) => `o${i}`);
  const devices: RoundPlan['devices'] = [];
  for (const user of online) {
    devices.push({ user, dev: `${user}/d0` });
    if (rng.chance(0.4)) devices.push({ user, dev: `${user}/d1` });
  }
  const g = (name: string) => `${name}-${roundTag}`;
  const groups: GroupPlan[] = [
    { id: g('small'), tier: 'small', admin: 'u0', members: ['u0', 'u1', 'o0'] },
    { id: g('large'), tier: 'large', admin: 'u2', members: ['u2', 'u3', 'u4', 'u5', 'o1'] },
    { id: g('huge'), tier: 'huge', admin: 'u0', members: online.slice(0, 8) },
    { id: g('churn'), tier: 'small', admin: 'u8', members: ['u8', 'u9'], churn: true },
  ];
  return {
    online,
    offline,
    devices,
    groups,
    counterAppinfos: new Set(['u0', 'u1', 'u2', 'u3', 'u4']),
    churners: ['u6', 'u7', 'o2'],
  };
}
