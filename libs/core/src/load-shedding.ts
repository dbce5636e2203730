/**
 * Overload shedding (docs/architecture.md, "Bounded work and overload", WeCom's 柔性策略): under load, refuse the cheapest-to-lose work
 * first — huge-group messages before large, large before small groups and 1:1. Pure policy:
 * callers measure event-loop lag and in-flight work and ask whether a class is admitted.
 */
import { BadRequestError, OverloadedError } from './errors.ts';
import type { Tier } from './tiers.ts';

/** Priority classes, lowest priority first. */
export type WorkClass = 'huge' | 'large' | 'small' | 'direct';
export const WORK_CLASSES: readonly WorkClass[] = ['huge', 'large', 'small', 'direct'];

export interface LoadSample {
  /** Event-loop delay now, in ms (messaging uses the mean over the last second). */
  lagMs: number;
  /** Requests being served now. */
  inFlight: number;
}

export interface SheddingPolicy {
  /** A class is refused while the lag is above its bound. */
  maxLagMs: Record<WorkClass, number>;
  /** A class is refused while more than this many requests are in flight. */
  maxInFlight: Record<WorkClass, number>;
}

export const DEFAULT_SHEDDING_POLICY: SheddingPolicy = Object.freeze({
  maxLagMs: Object.freeze({ huge: 40, large: 80, small: 250, direct: 250 }),
  maxInFlight: Object.freeze({ huge: 1000, large: 2000, small: 8000, direct: 8000 }),
});

/** The class of a send: 1:1 is `direct`; a group message takes its group's tier. */
export function workClassOf(conv: 'user' | 'group', tier?: Tier): WorkClass {
  return conv === 'user' ? 'direct' : (tier ?? 'small');
}

/**
 * Bounds must not decrease from huge to direct: otherwise a higher class could be shed while a
 * lower one is still admitted, which is the opposite of the promise.
 */
export function validateSheddingPolicy(p: SheddingPolicy): SheddingPolicy {
  for (const bounds of [p.maxLagMs, p.maxInFlight]) {
    let prev = 0;
    for (const c of WORK_CLASSES) {
      const v = bounds[c];
      if (typeof v !== 'number' || Number.isNaN(v) || v <= 0) {
        throw new BadRequestError(`shedding bound for ${c} must be a positive number, got ${String(v)}`);
      }
      if (v < prev) throw new BadRequestError(`shedding bound for ${c} (${v}) is below a lower-priority class (${prev})`);
      prev = v;
    }
  }
  return p;
}

/** Whether work of class `cls` is admitted under this load. */
export function admits(sample: LoadSample, cls: WorkClass, policy: SheddingPolicy = DEFAULT_SHEDDING_POLICY): boolean {
  return sample.lagMs <= policy.maxLagMs[cls] && sample.inFlight <= policy.maxInFlight[cls];
}

/** Admission control over a live load sample; throws OverloadedError for a shed class. */
export class LoadShedder {
  private readonly policy: SheddingPolicy;
  /** Refusals per class since start (metrics, tests). */
  readonly shed: Record<WorkClass, number> = { huge: 0, large: 0, small: 0, direct: 0 };

  constructor(
    private readonly sample: () => LoadSample,
    policy: SheddingPolicy = DEFAULT_SHEDDING_POLICY,
  ) {
    this.policy = validateSheddingPolicy(policy);
  }

  admits(cls: WorkClass): boolean {
    return admits(this.sample(), cls, this.policy);
  }

  /** Throws OVERLOADED when `cls` is shed now; the client retries later with backoff. */
  admit(cls: WorkClass): void {
    const s = this.sample();
    if (admits(s, cls, this.policy)) return;
    this.shed[cls] += 1;
    throw new OverloadedError(
      `server overloaded (event-loop lag ${Math.round(s.lagMs)} ms, ${s.inFlight} in flight): ${cls} work is shed first, retry later`,
    );
  }
}
