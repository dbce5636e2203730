import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InFlightQuota } from '../src/index.ts';

describe('InFlightQuota', () => {
  it('refuses a user past its cap without touching other users', () => {
    const q = new InFlightQuota();
    const caps = { perUserInFlight: 2, perTenantInFlight: 10 };
    const a = q.tryAcquire('t', 'alice', caps);
    const b = q.tryAcquire('t', 'alice', caps);
    expect(a.ok && b.ok).toBe(true);
    expect(q.tryAcquire('t', 'alice', caps)).toEqual({ ok: false, refused: 'user' });
    expect(q.tryAcquire('t', 'bob', caps).ok).toBe(true);
    if (a.ok) a.release();
    expect(q.tryAcquire('t', 'alice', caps).ok).toBe(true);
  });

  it('refuses a tenant past its cap; other tenants keep going', () => {
    const q = new InFlightQuota();
    const caps = { perUserInFlight: 5, perTenantInFlight: 3 };
    for (const u of ['a', 'b', 'c']) expect(q.tryAcquire('acme', u, caps).ok).toBe(true);
    expect(q.tryAcquire('acme', 'd', caps)).toEqual({ ok: false, refused: 'tenant' });
    expect(q.tryAcquire('globex', 'a', caps).ok).toBe(true);
  });

  it('a release is idempotent and caps apply live', () => {
    const q = new InFlightQuota();
    const r = q.tryAcquire('t', 'u', { perUserInFlight: 1, perTenantInFlight: 1 });
    if (!r.ok) throw new Error('refused');
    r.release();
    r.release();
    expect(q.inFlight('t')).toBe(0);
    expect(q.tryAcquire('t', 'u', { perUserInFlight: 1, perTenantInFlight: 1 }).ok).toBe(true);
    expect(q.tryAcquire('t', 'u', { perUserInFlight: 2, perTenantInFlight: 2 }).ok).toBe(true);
  });

  it('never exceeds either cap and returns to zero (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('t1', 't2'), fc.constantFrom('a', 'b', 'c'), fc.boolean()), { maxLength: 200 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        (ops, perUser, perTenant) => {
          const q = new InFlightQuota();
          const caps = { perUserInFlight: perUser, perTenantInFlight: perTenant };
          const held: Array<() => void> = [];
          for (const [t, u, acquire] of ops) {
            if (acquire) {
              const r = q.tryAcquire(t, u, caps);
              if (r.ok) held.push(r.release);
            } else held.shift()?.();
            for (const tenant of ['t1', 't2']) {
              expect(q.inFlight(tenant)).toBeLessThanOrEqual(perTenant);
              for (const user of ['a', 'b', 'c']) expect(q.inFlight(tenant, user)).toBeLessThanOrEqual(perUser);
            }
          }
          for (const r of held) r();
          expect(q.inFlight('t1') + q.inFlight('t2')).toBe(0);
        },
      ),
    );
  });
});
