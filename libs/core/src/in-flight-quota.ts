/**
 * Per-user and per-tenant in-flight caps (I6, docs/architecture.md, "Bounded work and overload"): one user may not occupy more than
 * its share of the workers, nor one tenant more than its. Pure bookkeeping; the caps are read
 * on every acquire so an operator's `limits set` applies at once.
 */
export interface InFlightCaps {
  perUserInFlight: number;
  perTenantInFlight: number;
}

export type QuotaRefusal = 'user' | 'tenant';

export class InFlightQuota {
  private readonly users = new Map<string, number>();
  private readonly tenants = new Map<string, number>();

  /** Takes one slot for (tenant, user), or says which cap refused it. */
  tryAcquire(tenant: string, user: string, caps: InFlightCaps): { ok: true; release: () => void } | { ok: false; refused: QuotaRefusal } {
    const userKey = `${tenant}:${user}`;
    const u = this.users.get(userKey) ?? 0;
    const t = this.tenants.get(tenant) ?? 0;
    if (u >= caps.perUserInFlight) return { ok: false, refused: 'user' };
    if (t >= caps.perTenantInFlight) return { ok: false, refused: 'tenant' };
    this.users.set(userKey, u + 1);
    this.tenants.set(tenant, t + 1);
    return { ok: true, release: new QuotaSlot(this.users, userKey, this.tenants, tenant).release };
  }

  inFlight(tenant: string, user?: string): number {
    return user === undefined ? (this.tenants.get(tenant) ?? 0) : (this.users.get(`${tenant}:${user}`) ?? 0);
  }
}

/** One taken slot; releasing it twice releases it once. */
class QuotaSlot {
  private released = false;

  constructor(
    private readonly users: Map<string, number>,
    private readonly userKey: string,
    private readonly tenants: Map<string, number>,
    private readonly tenant: string,
  ) {}

  // Callers pass `release` detached (`finally(slot.release)`). An arrow class field is not
  // wrapped in tsx's (esbuild keepNames) per-call defineProperty, as a named closure was.
  readonly release = (): void => {
    if (this.released) return;
    this.released = true;
    decrement(this.users, this.userKey);
    decrement(this.tenants, this.tenant);
  };
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 0) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
