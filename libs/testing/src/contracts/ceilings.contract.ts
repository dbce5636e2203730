/**
 * SeqCeilingStore contract (WeChat seqsvr sections). Decisions pinned here: claiming with the
 * stored epoch again is allowed (a restart of the same owner); a raise never lowers a ceiling
 * (raises that arrive out of order keep the highest); a stale epoch rejects with FencedError
 * and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { FencedError, type SeqCeilingStore } from '@seqline/core';
import { acrossReopen, shuffled, uniqueName, useSharedStore, type StoreOpener } from './harness.ts';

export function seqCeilingStoreContract(name: string, open: StoreOpener<SeqCeilingStore>): void {
  describe(`SeqCeilingStore contract: ${name}`, () => {
    const ctx = useSharedStore(open);

    it('nextEpoch strictly increases per scope', async () => {
      const scope = uniqueName('scope');
      const epochs: number[] = [];
      for (let i = 0; i < 10; i++) epochs.push(await ctx.store.nextEpoch(scope));
      for (let i = 1; i < epochs.length; i++) expect(epochs[i]).toBeGreaterThan(epochs[i - 1] ?? Infinity);
      expect(await ctx.store.nextEpoch(uniqueName('other-scope'))).toBeGreaterThan(0);
    });

    it('concurrent nextEpoch calls never return the same epoch', async () => {
      const scope = uniqueName('scope');
      const epochs = await Promise.all(Array.from({ length: 30 }, () => ctx.store.nextEpoch(scope)));
      expect(new Set(epochs).size).toBe(epochs.length);
    });

    it('nextEpoch keeps increasing across a reopen', async () => {
      const scope = uniqueName('scope');
      await acrossReopen(
        open,
        async (store) => {
          await store.nextEpoch(scope);
          return store.nextEpoch(scope);
        },
        async (store, last) => {
          expect(await store.nextEpoch(scope)).toBeGreaterThan(last);
        },
      );
    });

    it('claim of a new section returns 0; a raise is seen by the next claim', async () => {
      const section = uniqueName('section');
      expect(await ctx.store.claim(section, 1)).toBe(0);
      await ctx.store.raise(section, 10_000, 1);
      expect(await ctx.store.claim(section, 1)).toBe(10_000);
      await ctx.store.raise(section, 20_000, 1);
      expect(await ctx.store.claim(section, 2)).toBe(20_000);
    });

    it('a deposed owner is fenced: its raises and claims reject and change nothing', async () => {
      const section = uniqueName('section');
      const scope = uniqueName('scope');
      const oldEpoch = await ctx.store.nextEpoch(scope);
      const newEpoch = await ctx.store.nextEpoch(scope);
      expect(await ctx.store.claim(section, oldEpoch)).toBe(0);
      await ctx.store.raise(section, 10_000, oldEpoch);
      expect(await ctx.store.claim(section, newEpoch)).toBe(10_000);
      await expect(ctx.store.raise(section, 20_000, oldEpoch)).rejects.toBeInstanceOf(FencedError);
      await expect(ctx.store.claim(section, oldEpoch)).rejects.toBeInstanceOf(FencedError);
      expect(await ctx.store.claim(section, newEpoch)).toBe(10_000);
      await ctx.store.raise(section, 30_000, newEpoch);
      expect(await ctx.store.claim(section, newEpoch)).toBe(30_000);
    });

    it('a raise never lowers the ceiling', async () => {
      const section = uniqueName('section');
      await ctx.store.claim(section, 1);
      await ctx.store.raise(section, 30_000, 1);
      await ctx.store.raise(section, 20_000, 1);
      expect(await ctx.store.claim(section, 1)).toBe(30_000);
    });

    it('racing raises of one owner end at the highest ceiling', async () => {
      const section = uniqueName('section');
      await ctx.store.claim(section, 3);
      const ceilings = Array.from({ length: 25 }, (_, i) => (i + 1) * 10_000);
      await Promise.all(shuffled(ceilings).map((ceiling) => ctx.store.raise(section, ceiling, 3)));
      expect(await ctx.store.claim(section, 3)).toBe(250_000);
    });

    it('racing claims: exactly the highest epoch owns the section afterwards', async () => {
      const section = uniqueName('section');
      const epochs = Array.from({ length: 10 }, (_, i) => i + 1);
      await Promise.allSettled(shuffled(epochs).map((epoch) => ctx.store.claim(section, epoch)));
      await expect(ctx.store.raise(section, 5, 9)).rejects.toBeInstanceOf(FencedError);
      await ctx.store.raise(section, 5, 10);
      expect(await ctx.store.claim(section, 10)).toBe(5);
    });

    it('sections are independent', async () => {
      const a = uniqueName('section');
      const b = uniqueName('section');
      await ctx.store.claim(a, 5);
      await ctx.store.raise(a, 50_000, 5);
      expect(await ctx.store.claim(b, 1)).toBe(0);
      await ctx.store.raise(b, 7, 1);
      expect(await ctx.store.claim(a, 5)).toBe(50_000);
    });

    it('ceilings and fencing survive a reopen', async () => {
      const section = uniqueName('section');
      await acrossReopen(
        open,
        async (store) => {
          await store.claim(section, 4);
          await store.raise(section, 40_000, 4);
          await store.claim(section, 6);
        },
        async (store) => {
          await expect(store.raise(section, 90_000, 4)).rejects.toBeInstanceOf(FencedError);
          expect(await store.claim(section, 6)).toBe(40_000);
        },
      );
    });
  });
}
