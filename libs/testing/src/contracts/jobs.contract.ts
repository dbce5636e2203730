/**
 * JobStore contract (persisted jobs of the local bus). Decisions pinned here: update of a job
 * that is no longer pending is a no-op (it never resurrects one); revive resets attempts and
 * notBefore and clears firstFailedAt (a fresh give-up window); update replaces the whole job, so
 * an absent firstFailedAt or lastError clears the stored one. A shared database may hold other tests' jobs, so every test uses its own queue
 * names and id prefix and filters unqueued listings by that prefix.
 */
import { describe, expect, it } from 'vitest';
import { BadRequestError, MAX_JOB_ID_BYTES, type JobStore, type StoredJob } from '@seqline/core';
import { acrossReopen, shuffled, uniqueName, useSharedStore, type StoreOpener } from './harness.ts';

export function jobStoreContract(name: string, open: StoreOpener<JobStore>): void {
  describe(`JobStore contract: ${name}`, () => {
    const ctx = useSharedStore(open);

    /** Jobs of one test: unique id prefix and queue. */
    function scope(): {
      queue: string;
      job: (id: string, createdAt: number, extra?: Partial<StoredJob>) => StoredJob;
      mine: (jobs: StoredJob[]) => string[];
    } {
      const prefix = uniqueName('job');
      const queue = uniqueName('queue');
      return {
        queue,
        job: (id, createdAt, extra = {}) => ({
          id: `${prefix}-${id}`,
          queue,
          payload: { id, nested: { list: [1, 'two'] }, text: 'ünï' },
          attempts: 0,
          notBefore: 0,
          createdAt,
          ...extra,
        }),
        mine: (jobs) => jobs.filter((job) => job.id.startsWith(`${prefix}-`)).map((job) => job.id.slice(prefix.length + 1)),
      };
    }

    it('put stores a job once; a second put of the id is refused and changes nothing', async () => {
      const { queue, job } = scope();
      const first = job('a', 100);
      expect(await ctx.store.put(first)).toBe(true);
      expect(await ctx.store.put({ ...first, payload: 'other', createdAt: 1 })).toBe(false);
      expect(await ctx.store.list({ queue })).toEqual([first]);
    });

    it('takes ids up to MAX_JOB_ID_BYTES UTF-8 bytes (the longest server-made id fits) and refuses a longer one', async () => {
      const { queue, job, mine } = scope();
      // The scope's prefix plus 3-byte characters and ASCII up to exactly the bound.
      const head = job('', 1).id;
      const room = MAX_JOB_ID_BYTES - Buffer.byteLength(head);
      const longest = '中'.repeat(Math.floor(room / 3)) + 'x'.repeat(room % 3);
      const fits = job(longest, 1);
      expect(Buffer.byteLength(fits.id)).toBe(MAX_JOB_ID_BYTES);
      expect(await ctx.store.put(fits)).toBe(true);
      expect(mine(await ctx.store.list({ queue }))).toEqual([longest]);
      await ctx.store.bury(fits);
      expect(await ctx.store.revive({ id: fits.id, now: 5 })).toBe(true);
      expect(mine(await ctx.store.list({ queue }))).toEqual([longest]);
      const tooLong = async () => ctx.store.put(job(`${longest}y`, 2)); // a throw or a rejection alike
      await expect(tooLong()).rejects.toThrow(BadRequestError);
      expect(mine(await ctx.store.list({ queue }))).toEqual([longest]);
    });

    it('racing puts of one id: exactly one wins', async () => {
      const { queue, job } = scope();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.store.put(job('same', 100 + i))));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await ctx.store.list({ queue })).toHaveLength(1);
    });

    it('lists pending jobs oldest first, by createdAt then id, per queue or all', async () => {
      const { queue, job, mine } = scope();
      const other = scope();
      const jobs = [job('c', 200), job('b', 100), job('a', 100), job('d', 50), other.job('x', 150)];
      for (const j of shuffled(jobs)) await ctx.store.put(j);
      expect(mine(await ctx.store.list({ queue }))).toEqual(['d', 'a', 'b', 'c']);
      expect(other.mine(await ctx.store.list({ queue: other.queue }))).toEqual(['x']);
      const all = await ctx.store.list({});
      expect(mine(all)).toEqual(['d', 'a', 'b', 'c']);
      const positions = [job('d', 0), job('b', 0), other.job('x', 0), job('c', 0)].map(({ id }) => all.findIndex((j) => j.id === id));
      expect(positions).toEqual([...positions].sort((x, y) => x - y));
      expect(await ctx.store.list({ queue: uniqueName('empty-queue') })).toEqual([]);
    });

    it('update replaces a pending job, reorders it, and never resurrects one', async () => {
      const { queue, job, mine } = scope();
      await ctx.store.put(job('a', 100));
      await ctx.store.put(job('b', 200));
      const retried = job('a', 300, { attempts: 3, notBefore: 9_999, lastError: 'boom' });
      await ctx.store.update(retried);
      expect(mine(await ctx.store.list({ queue }))).toEqual(['b', 'a']);
      expect((await ctx.store.list({ queue }))[1]).toEqual(retried);
      await ctx.store.remove(retried.id);
      await ctx.store.update({ ...retried, attempts: 4 });
      expect(mine(await ctx.store.list({ queue }))).toEqual(['b']);
      await ctx.store.update(job('never', 1));
      expect(mine(await ctx.store.list({ queue }))).toEqual(['b']);
    });

    it('remove deletes a pending job and ignores an unknown id', async () => {
      const { queue, job, mine } = scope();
      await ctx.store.put(job('a', 1));
      await ctx.store.put(job('b', 2));
      await ctx.store.remove(job('a', 1).id);
      await ctx.store.remove(job('unknown', 1).id);
      expect(mine(await ctx.store.list({ queue }))).toEqual(['b']);
      expect(await ctx.store.put(job('a', 1))).toBe(true);
    });

    it('bury moves a job to the dead letters; revive brings it back with attempts reset', async () => {
      const { queue, job, mine } = scope();
      await ctx.store.put(job('a', 1));
      await ctx.store.put(job('b', 2));
      const failed = job('a', 1, { attempts: 12, notBefore: 5_000, lastError: 'gave up after 30 min' });
      await ctx.store.bury(failed);
      expect(mine(await ctx.store.list({ queue }))).toEqual(['b']);
      const dead = (await ctx.store.listDead()).filter((j) => j.id === failed.id);
      expect(dead).toEqual([failed]);
      expect(await ctx.store.revive({ id: failed.id, now: 77_000 })).toBe(true);
      expect((await ctx.store.listDead()).some((j) => j.id === failed.id)).toBe(false);
      const [revived] = (await ctx.store.list({ queue })).filter((j) => j.id === failed.id);
      expect(revived).toMatchObject({ id: failed.id, queue, payload: failed.payload, attempts: 0, notBefore: 77_000, createdAt: 1 });
      expect(await ctx.store.revive({ id: failed.id, now: 78_000 })).toBe(false);
      expect(await ctx.store.revive({ id: job('never', 1).id, now: 78_000 })).toBe(false);
    });

    it('firstFailedAt round-trips through put, update, list, bury and listDead; update without it and revive clear it', async () => {
      const { queue, job } = scope();
      const pendingOf = async (id: string) => (await ctx.store.list({ queue })).find((j) => j.id === id);
      const deadOf = async (id: string) => (await ctx.store.listDead()).find((j) => j.id === id);
      const waited = job('waited', 100, { attempts: 1, firstFailedAt: 1_800_100, lastError: 'hook answered HTTP 500' });
      expect(await ctx.store.put(waited)).toBe(true);
      expect(await pendingOf(waited.id)).toEqual(waited);
      const retried = { ...waited, attempts: 2, notBefore: 1_800_500, lastError: 'again' };
      await ctx.store.update(retried);
      expect(await pendingOf(waited.id)).toEqual(retried);
      // The queue's replay writes the job back without it: the stored one goes too.
      const { firstFailedAt: _cleared, lastError: _noError, ...fresh } = retried;
      await ctx.store.update(fresh);
      expect(await pendingOf(waited.id)).toEqual(fresh);
      expect((await pendingOf(waited.id))?.firstFailedAt).toBeUndefined();
      const failing = { ...fresh, attempts: 40, firstFailedAt: 1_800_200, lastError: 'gave up' };
      await ctx.store.update(failing);
      await ctx.store.bury(failing);
      expect(await deadOf(waited.id)).toEqual(failing);
      expect(await ctx.store.revive({ id: waited.id, now: 3_700_000 })).toBe(true);
      const revived = await pendingOf(waited.id);
      expect(revived).toMatchObject({ attempts: 0, notBefore: 3_700_000, createdAt: 100 });
      expect(revived?.firstFailedAt).toBeUndefined();
    });

    it('refuses a job whose firstFailedAt is not an integer, storing nothing', async () => {
      const { queue, job, mine } = scope();
      for (const firstFailedAt of [1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
        const bad = job(`bad-${String(firstFailedAt)}`, 1, { firstFailedAt });
        const putBad = async () => ctx.store.put(bad); // a throw or a rejection alike
        await expect(putBad()).rejects.toThrow(BadRequestError);
        const buryBad = async () => ctx.store.bury(bad);
        await expect(buryBad()).rejects.toThrow(BadRequestError);
      }
      expect(mine(await ctx.store.list({ queue }))).toEqual([]);
      expect(mine(await ctx.store.listDead())).toEqual([]);
    });

    it('lists dead letters oldest first', async () => {
      const { job, mine } = scope();
      for (const j of shuffled([job('c', 30), job('a', 10), job('b', 10)])) await ctx.store.bury(j);
      expect(mine(await ctx.store.listDead())).toEqual(['a', 'b', 'c']);
    });

    it('pending jobs and dead letters survive a reopen', async () => {
      const { queue, job, mine } = scope();
      await acrossReopen(
        open,
        async (store) => {
          await store.put(job('a', 1));
          await store.put(job('b', 2, { attempts: 2, firstFailedAt: 3 }));
          await store.bury(job('a', 1, { lastError: 'x', firstFailedAt: 1 }));
        },
        async (store) => {
          expect(await store.list({ queue })).toEqual([job('b', 2, { attempts: 2, firstFailedAt: 3 })]);
          expect((await store.listDead()).filter((j) => mine([j]).length > 0)).toEqual([job('a', 1, { lastError: 'x', firstFailedAt: 1 })]);
          expect(await store.put(job('b', 3))).toBe(false);
          expect(await store.revive({ id: job('a', 1).id, now: 5 })).toBe(true);
          expect(mine(await store.list({ queue }))).toEqual(['a', 'b']);
        },
      );
    });
  });
}
