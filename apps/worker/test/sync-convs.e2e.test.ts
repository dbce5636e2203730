/**
 * `sync` answers on the distributed stack (a gateway and a worker as processes on Cassandra,
 * Redis and NATS) carry every conversation their entries touch at or past those entries. The
 * CQL conversation index is written by the shard owner right after the entries, so a device that
 * syncs the moment an entry lands can see the entry before its conversation's state: right after
 * `group.create`, the creator's first sync holding the create notice must still carry the group
 * (the sync waits for the index), or name it in `convsPending` — never leave it out silently.
 */
import { describe, expect, it } from 'vitest';
import { waitFor, type TestClient } from '../../server/test/harness.ts';
import { uniqueId } from './support/cluster.ts';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

interface WireConv {
  conv: { type: string; id: string };
  asOfSeq: number;
  lastSeq: number;
}
interface SyncReply {
  entries: Array<{ seq: number; kind: string; type?: string; conv: { type: string; id: string } }>;
  headSeq: number;
  hasMore: boolean;
  convs: WireConv[];
  convsPending?: Array<{ type: string; id: string }>;
}

/** Groups created one after the other, each synced for at once. */
const ROUNDS = 12;

if (requireServices(await probeAll(), 'sync convs on the distributed stack')) {
  const stack = useOneNodeCluster();

  describe('sync convs on the distributed stack', () => {
    it('the first sync holding a group.create notice carries the group at or past it (or names it pending)', async () => {
      const member = uniqueId('member');
      let pending = 0;
      for (let round = 0; round < ROUNDS; round++) {
        // A new user each round: nothing of its inbox is cached yet, so sync reads the entries
        // from Cassandra, where they are before the index is.
        const creator: TestClient = await stack.connect(uniqueId('creator'));
        const maxSeq = 0;
        const { group } = await creator.ok<{ group: string }>('group.create', { name: `room ${round}`, members: [member] });
        // Sync as fast as the answers come until the notice is there (the fanout job writes it).
        const answer = await waitFor(
          async () => {
            const r = await creator.ok<SyncReply>('sync', { maxSeq, limit: 100 });
            return r.entries.some((e) => e.kind === 'group' && e.conv.id === group) ? r : undefined;
          },
          20_000,
          `the create notice of ${group}`,
        );
        const notice = answer.entries.find((e) => e.kind === 'group' && e.conv.id === group)!;
        const state = answer.convs.find((c) => c.conv.type === 'group' && c.conv.id === group);
        const named = answer.convsPending?.some((c) => c.type === 'group' && c.id === group) === true;
        expect(state !== undefined || named, `round ${round}: ${JSON.stringify(answer)}`).toBe(true);
        if (state !== undefined) {
          expect(state.asOfSeq).toBeGreaterThanOrEqual(notice.seq);
          expect(named).toBe(false);
        }
        // Every state in the answer is at or past the entries naming its conversation.
        for (const c of answer.convs) {
          const newest = Math.max(0, ...answer.entries.filter((e) => e.conv.id === c.conv.id && e.kind !== 'receipt').map((e) => e.seq));
          expect(c.asOfSeq, `${c.conv.id} in round ${round}`).toBeGreaterThanOrEqual(newest);
        }
        if (named) pending++;
        creator.close();
      }
      process.stdout.write(`[sync-convs.e2e] ${ROUNDS} creates: ${pending} answered with the group pending\n`);
    }, 120_000);
  });
}
