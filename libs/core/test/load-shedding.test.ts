import { describe, expect, it } from 'vitest';
import {
  admits,
  DEFAULT_SHEDDING_POLICY,
  LoadShedder,
  OverloadedError,
  validateSheddingPolicy,
  WORK_CLASSES,
  workClassOf,
  type LoadSample,
  type WorkClass,
} from '../src/index.ts';

const admitted = (s: LoadSample): WorkClass[] => WORK_CLASSES.filter((c) => admits(s, c));

describe('load shedding policy', () => {
  it('admits everything when idle', () => {
    expect(admitted({ lagMs: 0, inFlight: 0 })).toEqual(['huge', 'large', 'small', 'direct']);
  });

  it('sheds huge first, then large, keeping 1:1 and small groups longest (lag)', () => {
    expect(admitted({ lagMs: 50, inFlight: 0 })).toEqual(['large', 'small', 'direct']);
    expect(admitted({ lagMs: 100, inFlight: 0 })).toEqual(['small', 'direct']);
    expect(admitted({ lagMs: 5000, inFlight: 0 })).toEqual([]);
  });

  it('sheds by in-flight work the same way', () => {
    expect(admitted({ lagMs: 0, inFlight: 1500 })).toEqual(['large', 'small', 'direct']);
    expect(admitted({ lagMs: 0, inFlight: 3000 })).toEqual(['small', 'direct']);
  });

  it('whenever a class is admitted, every higher class is too (any load)', () => {
    for (let lag = 0; lag <= 2000; lag += 37) {
      for (let inFlight = 0; inFlight <= 10_000; inFlight += 611) {
        const ok = WORK_CLASSES.map((c) => admits({ lagMs: lag, inFlight }, c));
        const firstAdmitted = ok.indexOf(true);
        if (firstAdmitted >= 0) expect(ok.slice(firstAdmitted).every(Boolean)).toBe(true);
      }
    }
  });

  it('refuses a policy that would shed a higher class before a lower one', () => {
    expect(() =>
      validateSheddingPolicy({
        ...DEFAULT_SHEDDING_POLICY,
        maxLagMs: { huge: 500, large: 100, small: 1000, direct: 1000 },
      }),
    ).toThrow(/large/);
    expect(() =>
      validateSheddingPolicy({
        ...DEFAULT_SHEDDING_POLICY,
        maxInFlight: { huge: 0, large: 1, small: 1, direct: 1 },
      }),
    ).toThrow(/positive/);
  });

  it('LoadShedder reads the live sample and throws OVERLOADED with a count per class', () => {
    let lag = 0;
    const shedder = new LoadShedder(() => ({ lagMs: lag, inFlight: 0 }));
    expect(() => shedder.admit('huge')).not.toThrow();
    lag = 100;
    expect(() => shedder.admit('huge')).toThrow(OverloadedError);
    expect(() => shedder.admit('direct')).not.toThrow();
    expect(shedder.shed).toMatchObject({ huge: 1, direct: 0 });
    expect(shedder.admits('small')).toBe(true);
  });

  it('classifies sends: 1:1 is direct, a group takes its tier', () => {
    expect(workClassOf('user')).toBe('direct');
    expect(workClassOf('group', 'huge')).toBe('huge');
    expect(workClassOf('group', 'small')).toBe('small');
  });
});
