import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError, DEFAULT_LIMITS, LIMIT_KEYS, applyLimitsPatch, validateLimits } from '../src/index.ts';
import type { Limits } from '../src/index.ts';

describe('DEFAULT_LIMITS', () => {
  it('has the agreed values, is valid and cannot be mutated by accident', () => {
    expect(DEFAULT_LIMITS).toEqual({
      largeGroupConcurrency: 5,
      smallPool: 16,
      largePool: 8,
      hugePool: 4,
      perUserInFlight: 64,
      perTenantInFlight: 2000,
      perUserSockets: 20,
    });
    expect(validateLimits(DEFAULT_LIMITS)).toEqual(DEFAULT_LIMITS);
    expect(Object.isFrozen(DEFAULT_LIMITS)).toBe(true);
  });
});

describe('validateLimits', () => {
  it.each(LIMIT_KEYS.flatMap((key) => [0, -1, 1.5, Number.NaN, Infinity].map((v) => [key, v] as const)))('rejects %s = %s', (key, v) => {
    expect(() => validateLimits({ ...DEFAULT_LIMITS, [key]: v })).toThrow(BadRequestError);
  });

  it('rejects a missing or non-number field', () => {
    const { hugePool: _omit, ...rest } = DEFAULT_LIMITS;
    expect(() => validateLimits(rest as Limits)).toThrow(/hugePool/);
    expect(() => validateLimits({ ...DEFAULT_LIMITS, smallPool: '16' } as unknown as Limits)).toThrow(BadRequestError);
  });

  it('refuses a per-user cap above the per-tenant cap', () => {
    expect(() => validateLimits({ ...DEFAULT_LIMITS, perUserInFlight: 2001 })).toThrow(/perUserInFlight/);
    expect(validateLimits({ ...DEFAULT_LIMITS, perUserInFlight: 2000 }).perUserInFlight).toBe(2000);
  });

  it('returns a clean copy with only known keys', () => {
    const v = validateLimits({ ...DEFAULT_LIMITS, extra: 1 } as Limits);
    expect(Object.keys(v).sort()).toEqual([...LIMIT_KEYS].sort());
  });

  it('property: any positive integers with user <= tenant are accepted unchanged', () => {
    const pos = fc.integer({ min: 1, max: 1_000_000 });
    fc.assert(
      fc.property(pos, pos, pos, pos, pos, pos, pos, (a, b, c, d, u, t, s) => {
        const l: Limits = {
          largeGroupConcurrency: a,
          smallPool: b,
          largePool: c,
          hugePool: d,
          perUserInFlight: Math.min(u, t),
          perTenantInFlight: Math.max(u, t),
          perUserSockets: s,
        };
        expect(validateLimits(l)).toEqual(l);
      }),
    );
  });
});

describe('applyLimitsPatch', () => {
  it('changes only the given fields and validates the result', () => {
    expect(applyLimitsPatch(DEFAULT_LIMITS, { hugePool: 2 })).toEqual({ ...DEFAULT_LIMITS, hugePool: 2 });
    expect(() => applyLimitsPatch(DEFAULT_LIMITS, { perTenantInFlight: 10 })).toThrow(BadRequestError);
    expect(() => applyLimitsPatch(DEFAULT_LIMITS, { smallPool: 0 })).toThrow(BadRequestError);
  });
});
