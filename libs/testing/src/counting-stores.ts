/**
 * Stores with every call counted: by store and method, with the rows an array answer held, for
 * the tenant the call's first argument (a scoped key `tenant:id`, or an input object's `inbox`
 * or `group`) names. Tests and benches measure what an operation reads through it.
 */

export interface StoreReads {
  /** `store.method` → calls. */
  calls: Map<string, number>;
  /** `store.method` → rows returned in array answers. */
  rows: Map<string, number>;
}

export class CountingStores {
  private readonly byTenant = new Map<string, StoreReads>();

  /** The same stores, each call counted; the originals are untouched. */
  wrap<T extends object>(stores: T): T {
    const out: Record<string, unknown> = {};
    for (const [name, store] of Object.entries(stores))
      out[name] = typeof store === 'object' && store !== null ? this.counted(name, store) : store;
    return out as T;
  }

  /** What was counted for `tenant` since the last reset. */
  of(tenant: string): StoreReads {
    let reads = this.byTenant.get(tenant);
    if (reads === undefined) {
      reads = { calls: new Map(), rows: new Map() };
      this.byTenant.set(tenant, reads);
    }
    return reads;
  }

  reset(tenant: string): void {
    this.byTenant.delete(tenant);
  }

  private counted<T extends object>(store: string, target: T): T {
    return new Proxy(target, {
      get: (t, prop, receiver) => {
        const value: unknown = Reflect.get(t, prop, receiver);
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        return (...args: unknown[]) => {
          const tenant = tenantOf(args[0]);
          const name = `${store}.${prop}`;
          if (tenant !== undefined) bump(this.of(tenant).calls, name, 1);
          const result: unknown = Reflect.apply(value as (...a: unknown[]) => unknown, t, args);
          if (tenant === undefined || !(result instanceof Promise)) return result;
          return result.then((answer: unknown) => {
            if (Array.isArray(answer)) bump(this.of(tenant).rows, name, answer.length);
            return answer;
          });
        };
      },
    });
  }
}

/** The sum of a count map's values. */
export function totalCount(counts: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of counts.values()) n += v;
  return n;
}

function tenantOf(arg: unknown): string | undefined {
  let key = arg;
  if (typeof arg === 'object' && arg !== null) {
    const input = arg as { inbox?: unknown; group?: unknown };
    key = input.inbox ?? input.group;
  }
  if (typeof key !== 'string') return undefined;
  const i = key.indexOf(':');
  return i < 0 ? undefined : key.slice(0, i);
}

function bump(counts: Map<string, number>, name: string, n: number): void {
  counts.set(name, (counts.get(name) ?? 0) + n);
}
