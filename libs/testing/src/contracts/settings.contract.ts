/**
 * SettingsStore contract (operator settings, changed live by the admin CLI). The record is a
 * singleton, so unlike the other suites each test opens its own store: an adapter's opener
 * must give a new `dataKey` an empty settings record (a temp dir does; a CQL adapter scopes
 * the record by a name derived from the dataKey). Decisions pinned here: version 0 means
 * "nothing stored"; a save returns a copy the caller may mutate freely; a stale version
 * changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, DEFAULT_TIER_THRESHOLDS, type Settings, type SettingsStore } from '@seqline/core';
import { acrossReopen, shuffled, uniqueName, type StoreOpener } from './harness.ts';

type Values = Omit<Settings, 'version'>;

function values(smallPool: number, hysteresis = 0.1, hooks: Values['hooks'] = {}): Values {
  return {
    tiers: { ...DEFAULT_TIER_THRESHOLDS, hysteresis },
    limits: { ...DEFAULT_LIMITS, smallPool },
    hooks,
  };
}

/** Two tenants' hook overrides, with every kind of value a store must keep exactly. */
const HOOKS_A = {
  secret: 'a-secret-of-sixteen-or-more-chars',
  notifyUrl: 'https://push.example.com/notify',
  notifyWindowMs: 0,
  notifyPreview: true,
  beforeSendTimeoutMs: 250,
  beforeSendFailure: 'open',
  sendPolicy: 'shared-group',
  loginPolicy: 'one-per-platform',
} as const;
const HOOKS_B = { afterSendUrl: 'http://10.0.0.2:9000/after', loginPolicy: 'one' } as const;

export function settingsStoreContract(name: string, open: StoreOpener<SettingsStore>): void {
  describe(`SettingsStore contract: ${name}`, () => {
    async function withFreshStore(test: (store: SettingsStore) => Promise<void>): Promise<void> {
      const opened = await open(uniqueName('settings'));
      try {
        await test(opened.store);
      } finally {
        await opened.close();
      }
    }

    it('load is null before anything was saved', () =>
      withFreshStore(async (store) => {
        expect(await store.load()).toBeNull();
      }));

    it('the first save expects version 0 and yields version 1; load returns it exactly', () =>
      withFreshStore(async (store) => {
        const first = values(7, 0.15);
        expect(await store.save({ settings: first, expectedVersion: 0 })).toEqual({ ...first, version: 1 });
        expect(await store.load()).toEqual({ ...first, version: 1 });
      }));

    it('each save bumps the version by one', () =>
      withFreshStore(async (store) => {
        for (let v = 0; v < 5; v++) {
          const saved = await store.save({ settings: values(v + 1), expectedVersion: v });
          expect(saved).toEqual({ ...values(v + 1), version: v + 1 });
        }
        expect((await store.load())?.version).toBe(5);
      }));

    it('a stale or future expected version is refused and changes nothing', () =>
      withFreshStore(async (store) => {
        expect(await store.save({ settings: values(3), expectedVersion: 1 })).toBe(false); // nothing stored yet: only 0 fits
        await store.save({ settings: values(4), expectedVersion: 0 });
        await store.save({ settings: values(5), expectedVersion: 1 });
        expect(await store.save({ settings: values(99), expectedVersion: 1 })).toBe(false);
        expect(await store.save({ settings: values(99), expectedVersion: 0 })).toBe(false);
        expect(await store.save({ settings: values(99), expectedVersion: 7 })).toBe(false);
        expect(await store.load()).toEqual({ ...values(5), version: 2 });
      }));

    it('concurrent saves from the same version: exactly one wins and it is what is stored', () =>
      withFreshStore(async (store) => {
        await store.save({ settings: values(1), expectedVersion: 0 });
        const contenders = shuffled(Array.from({ length: 20 }, (_, i) => i + 100));
        const results = await Promise.all(contenders.map((pool) => store.save({ settings: values(pool), expectedVersion: 1 })));
        const winners = results.filter((r): r is Settings => r !== false);
        expect(winners).toHaveLength(1);
        expect(winners[0]?.version).toBe(2);
        expect(await store.load()).toEqual(winners[0]);
      }));

    it('a compare-and-set retry loop loses no update under contention', () =>
      withFreshStore(async (store) => {
        // Every writer adds one to smallPool: the read-modify-write of LiveSettings.update.
        const increment = async (): Promise<void> => {
          for (;;) {
            const current = await store.load();
            const base = current ?? { ...values(0), version: 0 };
            const next = { tiers: base.tiers, limits: { ...base.limits, smallPool: base.limits.smallPool + 1 }, hooks: base.hooks };
            if (await store.save({ settings: next, expectedVersion: base.version })) return;
          }
        };
        await Promise.all(Array.from({ length: 15 }, increment));
        const final = await store.load();
        expect(final?.limits.smallPool).toBe(15);
        expect(final?.version).toBe(15);
      }));

    it('returned settings are copies: mutating them changes nothing stored', () =>
      withFreshStore(async (store) => {
        const input = values(2);
        const saved = await store.save({ settings: input, expectedVersion: 0 });
        input.limits.smallPool = 1000;
        if (saved) saved.tiers.smallBelow = 1;
        const loaded = await store.load();
        expect(loaded).toEqual({ ...values(2), version: 1 });
        if (loaded) loaded.limits.hugePool = 1;
        expect(await store.load()).toEqual({ ...values(2), version: 1 });
      }));

    it('hooks of two tenants round-trip exactly, and a tenant removed from the record is gone', () =>
      withFreshStore(async (store) => {
        const both = values(2, 0.1, { acme: { ...HOOKS_A }, 'beta-co': { ...HOOKS_B } });
        expect(await store.save({ settings: both, expectedVersion: 0 })).toEqual({ ...both, version: 1 });
        expect(await store.load()).toEqual({ ...both, version: 1 });
        // A clear is a save without that tenant (LiveSettings drops an emptied override).
        const cleared = values(2, 0.1, { 'beta-co': { ...HOOKS_B } });
        expect(await store.save({ settings: cleared, expectedVersion: 1 })).toEqual({ ...cleared, version: 2 });
        const loaded = await store.load();
        expect(loaded).toEqual({ ...cleared, version: 2 });
        expect(loaded?.hooks).not.toHaveProperty('acme');
      }));

    it('a key cleared from one tenant stays cleared; the other tenant is untouched', () =>
      withFreshStore(async (store) => {
        await store.save({ settings: values(2, 0.1, { acme: { ...HOOKS_A }, 'beta-co': { ...HOOKS_B } }), expectedVersion: 0 });
        const { secret: _secret, notifyUrl: _url, ...rest } = HOOKS_A;
        await store.save({ settings: values(2, 0.1, { acme: rest, 'beta-co': { ...HOOKS_B } }), expectedVersion: 1 });
        const loaded = await store.load();
        expect(loaded?.hooks['acme']).toEqual(rest);
        expect(loaded?.hooks['acme']).not.toHaveProperty('secret');
        expect(loaded?.hooks['beta-co']).toEqual(HOOKS_B);
      }));

    it('returned hooks are copies: mutating them changes nothing stored', () =>
      withFreshStore(async (store) => {
        const input = values(2, 0.1, { acme: { ...HOOKS_A } });
        const saved = await store.save({ settings: input, expectedVersion: 0 });
        (input.hooks['acme'] ?? {}).notifyUrl = 'https://evil.example.com/';
        if (saved) (saved.hooks['acme'] ?? {}).loginPolicy = 'all';
        const loaded = await store.load();
        expect(loaded?.hooks).toEqual({ acme: HOOKS_A });
        if (loaded) loaded.hooks['other'] = { loginPolicy: 'one' };
        expect((await store.load())?.hooks).toEqual({ acme: HOOKS_A });
      }));

    it('settings and version survive a reopen, and the CAS continues from there', async () => {
      await acrossReopen(
        open,
        async (store) => {
          await store.save({ settings: values(3), expectedVersion: 0 });
          return store.save({ settings: values(4, 0.2), expectedVersion: 1 });
        },
        async (store, saved) => {
          expect(saved).not.toBe(false);
          expect(await store.load()).toEqual({ ...values(4, 0.2), version: 2 });
          expect(await store.save({ settings: values(5), expectedVersion: 1 })).toBe(false);
          expect(await store.save({ settings: values(5), expectedVersion: 2 })).toEqual({ ...values(5), version: 3 });
        },
      );
    });
  });
}
