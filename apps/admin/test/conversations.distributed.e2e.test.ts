/**
 * The conversation index on the distributed stack (a gateway and a worker as processes on
 * Cassandra, Redis and NATS): a push through gateway + worker carries `convs`; `seqline-admin
 * inbox USER --conversations` against the gateway's admin API checks the CQL index against a
 * recount; a row tampered with in CQL is reported, `conversations rebuild` (gateway → NATS →
 * the shard owner's queue) says it differed and fixes it, and a second rebuild finds nothing.
 */
import { Client, types } from 'cassandra-driver';
import { describe, expect, it } from 'vitest';
import { seqWriteTimestamp } from '@seqline/core';
import { appinfo, SECRET, waitFor, type Push } from '../../server/test/harness.ts';
import { E2E_KEYSPACE, uniqueId } from '../../worker/test/support/cluster.ts';
import { useOneNodeCluster } from '../../worker/test/support/one-node-cluster.ts';
import { CQL_CONTACT, probeAll, requireServices } from '../../worker/test/support/services.ts';
import { runCli } from './cli-harness.ts';

interface WireConv {
  conv: { type: string; id: string };
  lastSeq: number;
  unread: number;
  asOfSeq: number;
}
interface View {
  headSeq: number;
  conversations: WireConv[];
  check: { exact: boolean; asOfSeq: number; entries: number; differences: unknown[] };
}

if (requireServices(await probeAll(), 'seqline-admin conversations on the distributed stack')) {
  const stack = useOneNodeCluster();
  const cli = (...args: string[]) =>
    runCli(['--url', stack.cluster.gateways[0]!.httpUrl, ...args, '--tenant', stack.cluster.tenant], { SEQLINE_SECRET: SECRET });
  const view = async (user: string): Promise<View> => {
    const r = await cli('inbox', user, '--conversations', '--json');
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as View;
  };

  describe('conversation index on the distributed stack', () => {
    it('a push through gateway and worker carries the sender conversation with its unread count', async () => {
      const [alice, bob] = [uniqueId('alice'), uniqueId('bob')];
      const a = await stack.connect(alice);
      const b = await stack.connect(bob);
      const apps = [appinfo(), appinfo()];
      for (const app of apps) await a.ok('send', { appinfo: app, to: { user: bob }, type: 'text', body: { text: app } });
      const last = await waitFor<Push & { convs?: WireConv[] }>(
        () => b.pushes.find((p) => p.entries.some((e) => e.appinfo === apps[1])),
        15_000,
        'the push of the second message',
      );
      // The CQL index is written by the owner before the append resolves, so it is not behind here.
      expect(last.convs).toEqual([expect.objectContaining({ conv: { type: 'user', id: alice }, unread: 2 })]);
      expect(last.convs![0]!.asOfSeq).toBeGreaterThanOrEqual(last.entries.at(-1)!.seq);
    });

    it('inbox --conversations is exact; a tampered CQL row is reported; rebuild fixes it, then finds nothing', async () => {
      const [alice, bob] = [uniqueId('alice'), uniqueId('bob')];
      const a = await stack.connect(alice);
      for (const text of ['one', 'two', 'three'])
        await a.ok('send', { appinfo: appinfo(), to: { user: bob }, type: 'text', body: { text } });
      // The recipient's copies arrive through the owner of bob's shard; wait until all three are in.
      const exact = await waitFor(
        async () => {
          const v = await view(bob);
          return v.check.entries === 3 && v.check.exact ? v : undefined;
        },
        15_000,
        "bob's index to hold the three messages",
      );
      const conv = exact.conversations[0]!;
      expect(conv).toMatchObject({ conv: { type: 'user', id: alice }, unread: 3 });

      const cql = new Client({ contactPoints: CQL_CONTACT.split(','), localDataCenter: process.env.SCYLLA_LOCAL_DC ?? 'datacenter1' });
      try {
        const inbox = `${stack.cluster.tenant}:${bob}`;
        const key = `user:${alice}`;
        // Index rows take their timestamps from seqs: a hand edit goes above the write exact at the watermark.
        const at = types.Long.fromString((seqWriteTimestamp(exact.headSeq) + 1n).toString());
        await cql.execute(
          `UPDATE ${E2E_KEYSPACE}.conv_records USING TIMESTAMP ? SET unread = 8 WHERE inbox = ? AND conv_key = ?`,
          [at, inbox, key],
          {
            prepare: true,
          },
        );
        await cql.execute(
          `UPDATE ${E2E_KEYSPACE}.conv_list USING TIMESTAMP ? SET unread = 8 WHERE inbox = ? AND last_seq = ?`,
          [at, inbox, conv.lastSeq],
          {
            prepare: true,
          },
        );
      } finally {
        await cql.shutdown();
      }
      const tampered = await view(bob);
      expect(tampered.check).toMatchObject({
        exact: false,
        differences: [{ conversation: `user:${alice}`, field: 'unread', index: 8, recount: 3 }],
      });
      expect((await cli('inbox', bob, '--conversations')).stdout).toMatch(/index: DIFFERS from a recount of 3 entries/);

      const rebuilt = await cli('conversations', 'rebuild', bob);
      expect(rebuilt).toMatchObject({ code: 0, stderr: '' });
      expect(rebuilt.stdout).toMatch(new RegExp(`it DIFFERED and is fixed; 1 conversation\\(s\\) changed: user:${alice}`));
      expect((await view(bob)).check).toMatchObject({ exact: true, entries: 3 });
      expect((await view(bob)).conversations[0]?.unread).toBe(3);

      const again = JSON.parse((await cli('conversations', 'rebuild', bob, '--json')).stdout) as { differed: boolean; entries: number };
      expect(again).toMatchObject({ differed: false, changedConversations: [], conversations: 1, entries: 3 });
    });
  });
}
