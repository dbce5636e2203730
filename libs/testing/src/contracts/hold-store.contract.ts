/**
 * HoldStore contract (the hold of a user whose socket the refusal rule closed). Holds are short
 * and timed by the store, so the suite uses holds of a few hundred ms and waits for a hold to
 * end by asking the store (bounded), never by a guessed sleep. Keys are unique per test.
 */
import { describe, expect, it } from 'vitest';
import type { HoldStore } from '@seqline/core';
import { uniqueName, type OpenedStore } from './harness.ts';

export interface HoldStoreContractOptions {
  /** Two stores opened by the opener share their holds (one Redis): a hold set through one is seen through the other. */
  sharedBetweenOpens: boolean;
}

export function holdStoreContract(name: string, open: () => Promise<OpenedStore<HoldStore>>, options: HoldStoreContractOptions): void {
  describe(`HoldStore contract: ${name}`, () => {
    async function withStore(test: (store: HoldStore) => Promise<void>): Promise<void> {
      const opened = await open();
      try {
        await test(opened.store);
      } finally {
        await opened.close();
      }
    }

    it('a key never held is not held', () =>
      withStore(async (store) => {
        expect(await store.remainingMs({ key: uniqueName('nobody') })).toBe(0);
      }));

    it('a hold lasts its length, then ends', () =>
      withStore(async (store) => {
        const key = uniqueName('held');
        const before = Date.now();
        await store.hold({ key, ms: 300 });
        const left = await store.remainingMs({ key });
        expect(left).toBeGreaterThan(0);
        expect(left).toBeLessThanOrEqual(300);
        // Ended within its length (plus a bound for a loaded machine): asked, not slept on.
        while ((await store.remainingMs({ key })) > 0) {
          expect(Date.now() - before).toBeLessThan(5_000);
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(Date.now() - before).toBeGreaterThanOrEqual(250);
      }));

    it('a longer hold already set stays; a longer one extends a shorter one', () =>
      withStore(async (store) => {
        const key = uniqueName('longest');
        await store.hold({ key, ms: 60_000 });
        await store.hold({ key, ms: 100 });
        expect(await store.remainingMs({ key })).toBeGreaterThan(50_000);
        const other = uniqueName('extended');
        await store.hold({ key: other, ms: 100 });
        await store.hold({ key: other, ms: 60_000 });
        expect(await store.remainingMs({ key: other })).toBeGreaterThan(50_000);
      }));

    it('keys are independent, whatever they contain', () =>
      withStore(async (store) => {
        const base = uniqueName('k');
        const keys = [`${base}:alice`, `${base}:{alice}`, `${base}:ali ce`, `${base}:ünï😀`, `${base}:`];
        await store.hold({ key: keys[0]!, ms: 60_000 });
        expect(await Promise.all(keys.map((key) => store.remainingMs({ key })))).toEqual([expect.any(Number), 0, 0, 0, 0]);
        for (const key of keys.slice(1)) await store.hold({ key, ms: 60_000 });
        for (const key of keys) expect(await store.remainingMs({ key })).toBeGreaterThan(0);
      }));

    it('a hold of zero, a negative, NaN or infinite length holds nothing, and does not throw', () =>
      withStore(async (store) => {
        const key = uniqueName('nothing');
        for (const ms of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) await store.hold({ key, ms });
        expect(await store.remainingMs({ key })).toBe(0);
      }));

    it('a fractional length is held at least that long', () =>
      withStore(async (store) => {
        const key = uniqueName('fraction');
        await store.hold({ key, ms: 20_000.4 });
        expect(await store.remainingMs({ key })).toBeGreaterThan(19_000);
      }));

    if (options.sharedBetweenOpens) {
      it('a hold set through one store is seen through another', async () => {
        const [a, b] = [await open(), await open()];
        try {
          const key = uniqueName('shared');
          await a.store.hold({ key, ms: 60_000 });
          expect(await b.store.remainingMs({ key })).toBeGreaterThan(50_000);
        } finally {
          await a.close();
          await b.close();
        }
      });
    }
  });
}
