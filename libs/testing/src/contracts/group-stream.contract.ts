/** GroupStreamStore contract: the timeline append/read contract on (group, gseq), plus cursors. */
import { describe, expect, it } from 'vitest';
import { groupKey, inboxKey, type GroupKey, type GroupStreamStore } from '@seqline/core';
import { acrossReopen, msgEntry, shuffled, uniqueTenant, useSharedStore, type StoreOpener } from './harness.ts';
import { seqLogTests } from './seq-log.contract.ts';
import type { PreviousLayoutWriter } from './seq-log-port.ts';

export interface GroupStreamContractOptions {
  /** Writes the previous version's dedup layout (keyed by plain appinfo): runs the upgrade cases. */
  previousLayout?: PreviousLayoutWriter<GroupKey>;
}

export function groupStreamStoreContract(
  name: string,
  open: StoreOpener<GroupStreamStore>,
  options: GroupStreamContractOptions = {},
): void {
  describe(`GroupStreamStore contract: ${name}`, () => {
    const ctx = useSharedStore(open);

    describe('append and read', () => {
      seqLogTests(ctx, {
        open,
        makeKey: groupKey,
        append: (store, group, entries) => store.append({ group, entries }),
        find: (store, group, keys) => store.findSeqs({ group, keys }),
        readAfter: (store, group, afterGseq, limit) => store.readAfter({ group, afterGseq, limit }),
        readBefore: (store, group, beforeGseq, limit) => store.readBefore({ group, beforeGseq, limit }),
        previousLayout: options.previousLayout,
      });

      it('round-trips group messages', async () => {
        const group = groupKey(uniqueTenant(), 'g');
        const entries = [
          msgEntry(1, 'a', { conv: { type: 'group', id: 'g' }, from: 'alice', body: { text: '大家好', at: ['bob'] } }),
          msgEntry(2, 'b', { conv: { type: 'group', id: 'g' }, from: 'bob', type: 'image', body: { url: 'https://x/y.png', w: 10 } }),
        ];
        await ctx.store.append({ group, entries });
        expect(await ctx.store.readAfter({ group, afterGseq: 0, limit: 10 })).toEqual(entries);
      });
    });

    describe('cursors', () => {
      const fresh = (): { group: GroupKey; tenant: string } => {
        const tenant = uniqueTenant();
        return { group: groupKey(tenant, 'g'), tenant };
      };

      it('starts at 0 and only moves forward', async () => {
        const { group, tenant } = fresh();
        const alice = inboxKey(tenant, 'alice');
        expect(await ctx.store.getCursor({ group, inbox: alice })).toBe(0);
        expect(await ctx.store.setCursor({ group, inbox: alice, gseq: 5 })).toBe(5);
        expect(await ctx.store.setCursor({ group, inbox: alice, gseq: 3 })).toBe(5);
        expect(await ctx.store.setCursor({ group, inbox: alice, gseq: 5 })).toBe(5);
        expect(await ctx.store.getCursor({ group, inbox: alice })).toBe(5);
        expect(await ctx.store.setCursor({ group, inbox: alice, gseq: 12_000 })).toBe(12_000);
        expect(await ctx.store.getCursor({ group, inbox: alice })).toBe(12_000);
      });

      it('is per group and per member', async () => {
        const { group, tenant } = fresh();
        const other = groupKey(tenant, 'other');
        await ctx.store.setCursor({ group, inbox: inboxKey(tenant, 'alice'), gseq: 7 });
        expect(await ctx.store.getCursor({ group, inbox: inboxKey(tenant, 'bob') })).toBe(0);
        expect(await ctx.store.getCursor({ group: other, inbox: inboxKey(tenant, 'alice') })).toBe(0);
        expect(await ctx.store.getCursor({ group, inbox: inboxKey(uniqueTenant(), 'alice') })).toBe(0);
      });

      it('listCursors lists every cursor of the group and only its', async () => {
        const { group, tenant } = fresh();
        expect(await ctx.store.listCursors(group)).toEqual(new Map());
        await ctx.store.setCursor({ group, inbox: inboxKey(tenant, 'alice'), gseq: 7 });
        await ctx.store.setCursor({ group, inbox: inboxKey(tenant, 'bob'), gseq: 3 });
        await ctx.store.setCursor({ group, inbox: inboxKey(tenant, 'bob'), gseq: 9 });
        await ctx.store.setCursor({ group: groupKey(tenant, 'other'), inbox: inboxKey(tenant, 'carol'), gseq: 4 });
        expect(await ctx.store.listCursors(group)).toEqual(
          new Map([
            [inboxKey(tenant, 'alice'), 7],
            [inboxKey(tenant, 'bob'), 9],
          ]),
        );
      });

      it('racing acks keep the highest cursor', async () => {
        const { group, tenant } = fresh();
        const alice = inboxKey(tenant, 'alice');
        const values = Array.from({ length: 50 }, (_, i) => i + 1);
        const returned = await Promise.all(
          shuffled(values).map((gseq) => ctx.store.setCursor({ group, inbox: alice, gseq }).then((stored) => ({ gseq, stored }))),
        );
        for (const { gseq, stored } of returned) expect(stored).toBeGreaterThanOrEqual(gseq);
        expect(await ctx.store.getCursor({ group, inbox: alice })).toBe(50);
      });

      it('cursors survive a reopen', async () => {
        const { group, tenant } = fresh();
        const alice = inboxKey(tenant, 'alice');
        await acrossReopen(
          open,
          async (store) => {
            await store.setCursor({ group, inbox: alice, gseq: 42 });
          },
          async (store) => {
            expect(await store.getCursor({ group, inbox: alice })).toBe(42);
            expect(await store.setCursor({ group, inbox: alice, gseq: 41 })).toBe(42);
          },
        );
      });
    });
  });
}
