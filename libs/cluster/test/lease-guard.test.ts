import { describe, expect, it } from 'vitest';
import { leaseGuard } from '../src/fenced-timeline.ts';

describe('leaseGuard', () => {
  it("runs the caller's guard, then the lease check, and names the lease as its term", () => {
    const calls: string[] = [];
    let lost: string | undefined;
    const outer = Object.assign(
      () => {
        calls.push('outer');
      },
      { term: 'app' },
    );
    const guard = leaseGuard(
      3,
      7,
      () => {
        calls.push('lease');
        return lost;
      },
      outer,
    );
    guard();
    expect(calls).toEqual(['outer', 'lease']);
    expect(guard.term).toBe('app/shard-3@7');
    lost = 'expired';
    expect(() => guard()).toThrow(/expired/);
  });

  it('has no term without an epoch or a termed caller', () => {
    expect(leaseGuard(1, undefined, () => undefined).term).toBeUndefined();
    expect(leaseGuard(1, 2, () => undefined).term).toBe('shard-1@2');
  });
});
