/**
 * SeqCeilingStore contract (WeChat seqsvr sections). Decisions pinned here: claiming with the
 * stored epoch again is allowed (a restart of the same owner); a raise never lowers a ceiling
 * (raises that arrive out of order keep the highest); a stale epoch rejects with FencedError
 * and changes nothing; a release is recorded only for the scope's last drawn epoch, and a draw
 * reports the record it replaced.
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

    it('drawEpoch returns the record it replaced: none for a new scope, then the epoch before', async () => {
      const scope = uniqueName('scope');
      expect(await ctx.store.drawEpoch({ scope })).toEqual({ epoch: 1, before: undefined });
      expect(await ctx.store.drawEpoch({ scope })).toEqual({ epoch: 2, before: { epoch: 1 } });
      // One counter with nextEpoch.
      expect(await ctx.store.nextEpoch(scope)).toBe(3);
      expect(await ctx.store.drawEpoch({ scope })).toEqual({ epoch: 4, before: { epoch: 3 } });
    });

    it('a release of the last epoch is recorded and seen by the next draw', async () => {
      const scope = uniqueName('scope');
      const { epoch } = await ctx.store.drawEpoch({ scope });
      expect(await ctx.store.recordRelease({ scope, epoch, atMs: 1_763_700_000_123 })).toBe(true);
      // A retry of the same record is answered the same (after an unknown outcome).
      expect(await ctx.store.recordRelease({ scope, epoch, atMs: 1_763_700_000_123 })).toBe(true);
      expect(await ctx.store.drawEpoch({ scope })).toEqual({
        epoch: epoch + 1,
        before: { epoch, released: { epoch, atMs: 1_763_700_000_123 } },
      });
      // The record stays with its epoch: the draw after sees an unreleased epoch and an older release.
      expect(await ctx.store.drawEpoch({ scope })).toEqual({
        epoch: epoch + 2,
        before: { epoch: epoch + 1, released: { epoch, atMs: 1_763_700_000_123 } },
      });
    });

    it('a release of an epoch that is no longer the last is refused and records nothing', async () => {
      const scope = uniqueName('scope');
      const old = await ctx.store.drawEpoch({ scope });
      const later = await ctx.store.drawEpoch({ scope });
      expect(await ctx.store.recordRelease({ scope, epoch: old.epoch, atMs: 5 })).toBe(false);
      expect(await ctx.store.recordRelease({ scope, epoch: later.epoch + 7, atMs: 5 })).toBe(false);
      expect(await ctx.store.recordRelease({ scope: uniqueName('never-drawn'), epoch: 1, atMs: 5 })).toBe(false);
      expect(await ctx.store.drawEpoch({ scope })).toEqual({ epoch: later.epoch + 1, before: { epoch: later.epoch } });
    });

    it('a malformed release is refused and records nothing', async () => {
      const scope = uniqueName('scope');
      const { epoch } = await ctx.store.drawEpoch({ scope });
      for (const bad of [
        { epoch: -1, atMs: 5 },
        { epoch: Number.NaN, atMs: 5 },
        { epoch: 1.5, atMs: 5 },
        { epoch, atMs: -5 },
        { epoch, atMs: Number.POSITIVE_INFINITY },
      ]) {
        await expect(ctx.store.recordRelease({ scope, ...bad })).rejects.toThrow();
      }
      expect(await ctx.store.drawEpoch({ scope })).toEqual({ epoch: epoch + 1, before: { epoch } });
    });

    it('racing draws and a release: each draw names the epoch right before it; a refused release is never seen', async () => {
      const scope = uniqueName('scope');
      const { epoch } = await ctx.store.drawEpoch({ scope });
      const [recorded, ...draws] = await Promise.all([
        ctx.store.recordRelease({ scope, epoch, atMs: 42 }),
        ...Array.from({ length: 6 }, () => ctx.store.drawEpoch({ scope })),
      ]);
      const epochs = draws.map((d) => d.epoch).sort((a, b) => a - b);
      expect(epochs).toEqual(Array.from({ length: 6 }, (_, i) => epoch + 1 + i));
      for (const d of draws) expect(d.before?.epoch).toBe(d.epoch - 1);
      const sawRelease = draws.filter((d) => d.before?.released?.epoch === d.before?.epoch);
      if (!recorded) expect(sawRelease).toEqual([]);
      // Only the draw that replaced the released epoch can vouch for it.
      for (const d of sawRelease) expect(d.epoch).toBe(epoch + 1);
    });

    it('a release survives a reopen', async () => {
      const scope = uniqueName('scope');
      await acrossReopen(
        open,
        async (store) => {
          const { epoch } = await store.drawEpoch({ scope });
          expect(await store.recordRelease({ scope, epoch, atMs: 77 })).toBe(true);
          return epoch;
        },
        async (store, epoch) => {
          expect(await store.drawEpoch({ scope })).toEqual({ epoch: epoch + 1, before: { epoch, released: { epoch, atMs: 77 } } });
        },
      );
    });

    it('claim of a new section returns 0; a raise is seen by the next claim', async () => {
      const section = uniqueName('section');
      expect(await ctx.store.claim({ section, epoch: 1 })).toBe(0);
      await ctx.store.raise({ section, ceiling: 10_000, epoch: 1 });
      expect(await ctx.store.claim({ section, epoch: 1 })).toBe(10_000);
      await ctx.store.raise({ section, ceiling: 20_000, epoch: 1 });
      expect(await ctx.store.claim({ section, epoch: 2 })).toBe(20_000);
    });

    it('a deposed owner is fenced: its raises and claims reject and change nothing', async () => {
      const section = uniqueName('section');
      const scope = uniqueName('scope');
      const oldEpoch = await ctx.store.nextEpoch(scope);
      const newEpoch = await ctx.store.nextEpoch(scope);
      expect(await ctx.store.claim({ section, epoch: oldEpoch })).toBe(0);
      await ctx.store.raise({ section, ceiling: 10_000, epoch: oldEpoch });
      expect(await ctx.store.claim({ section, epoch: newEpoch })).toBe(10_000);
      await expect(ctx.store.raise({ section, ceiling: 20_000, epoch: oldEpoch })).rejects.toBeInstanceOf(FencedError);
      await expect(ctx.store.claim({ section, epoch: oldEpoch })).rejects.toBeInstanceOf(FencedError);
      expect(await ctx.store.claim({ section, epoch: newEpoch })).toBe(10_000);
      await ctx.store.raise({ section, ceiling: 30_000, epoch: newEpoch });
      expect(await ctx.store.claim({ section, epoch: newEpoch })).toBe(30_000);
    });

    it('a raise never lowers the ceiling', async () => {
      const section = uniqueName('section');
      await ctx.store.claim({ section, epoch: 1 });
      await ctx.store.raise({ section, ceiling: 30_000, epoch: 1 });
      await ctx.store.raise({ section, ceiling: 20_000, epoch: 1 });
      expect(await ctx.store.claim({ section, epoch: 1 })).toBe(30_000);
    });

    it('racing raises of one owner end at the highest ceiling', async () => {
      const section = uniqueName('section');
      await ctx.store.claim({ section, epoch: 3 });
      const ceilings = Array.from({ length: 25 }, (_, i) => (i + 1) * 10_000);
      await Promise.all(shuffled(ceilings).map((ceiling) => ctx.store.raise({ section, ceiling, epoch: 3 })));
      expect(await ctx.store.claim({ section, epoch: 3 })).toBe(250_000);
    });

    it('racing claims: exactly the highest epoch owns the section afterwards', async () => {
      const section = uniqueName('section');
      const epochs = Array.from({ length: 10 }, (_, i) => i + 1);
      await Promise.allSettled(shuffled(epochs).map((epoch) => ctx.store.claim({ section, epoch })));
      await expect(ctx.store.raise({ section, ceiling: 5, epoch: 9 })).rejects.toBeInstanceOf(FencedError);
      await ctx.store.raise({ section, ceiling: 5, epoch: 10 });
      expect(await ctx.store.claim({ section, epoch: 10 })).toBe(5);
    });

    it('sections are independent', async () => {
      const a = uniqueName('section');
      const b = uniqueName('section');
      await ctx.store.claim({ section: a, epoch: 5 });
      await ctx.store.raise({ section: a, ceiling: 50_000, epoch: 5 });
      expect(await ctx.store.claim({ section: b, epoch: 1 })).toBe(0);
      await ctx.store.raise({ section: b, ceiling: 7, epoch: 1 });
      expect(await ctx.store.claim({ section: a, epoch: 5 })).toBe(50_000);
    });

    it('ceilings and fencing survive a reopen', async () => {
      const section = uniqueName('section');
      await acrossReopen(
        open,
        async (store) => {
          await store.claim({ section, epoch: 4 });
          await store.raise({ section, ceiling: 40_000, epoch: 4 });
          await store.claim({ section, epoch: 6 });
        },
        async (store) => {
          await expect(store.raise({ section, ceiling: 90_000, epoch: 4 })).rejects.toBeInstanceOf(FencedError);
          expect(await store.claim({ section, epoch: 6 })).toBe(40_000);
        },
      );
    });
  });
}
