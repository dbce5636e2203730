/**
 * The copy-holder model test on the distributed stack: a gateway and a worker as processes on
 * Cassandra, Redis and NATS, driven over the wire. The same driver and oracle as the embedded
 * run (libs/messaging/test/copy-holders.model.test.ts; @seqline/testing, copy-holders/): a
 * random life of a group — members added, removed and re-added, tier thresholds switched live
 * through the admin API so membership changes move it between write- and read-fanout, sends
 * with mentions (some racing a membership change), recalls by sender and admin, edits retried
 * by editId — then, with every job done: recall and edit entries sit in exactly the inboxes
 * holding a copy (read from CQL), and every view of every user (conversations with messages
 * and last, history {conv}, sync and its convs, the convs of every push) agrees with core's
 * recount. The index trails the entries here, so sync may name a conversation in
 * `convsPending` and a push may go without `convs` (docs/protocol.md); the clock is real, so
 * ops share a millisecond only by chance.
 *
 * The tier thresholds are one settings row per keyspace: this file has a keyspace of its own,
 * so switching them never changes another file's groups.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { openScyllaStores, type ScyllaStores } from '@seqline/store/scylla';
import {
  addCopyHolderCounts,
  copyHolderRunArb,
  PINNED_COPY_HOLDER_RUNS,
  runCopyHolderModel,
  type CopyHolderCounts,
  type CopyHolderRig,
  type ModelOp,
} from '@seqline/testing';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { CQL_CONTACT, NATS_URL, probeAll, requireServices } from './support/services.ts';
import { jobsDrained, putTiers, WireMessaging } from './support/wire-model.ts';

const KEYSPACE = process.env.SEQLINE_MODEL_KEYSPACE ?? 'seqline_holders_model';
/** Each run costs a second or more of real processes: few runs keep the file well under two minutes. */
const RUNS = 15;
const OPS = { minLength: 10, maxLength: 40 };

if (requireServices(await probeAll(), 'the copy-holder model on the distributed stack')) {
  const stack = useOneNodeCluster({ env: () => ({ SCYLLA_KEYSPACE: KEYSPACE }) });
  let stores: ScyllaStores | undefined;
  let nc: NatsConnection | undefined;
  let rig: CopyHolderRig;
  let runs = 0;
  const total: Partial<CopyHolderCounts> = {};

  beforeAll(async () => {
    const opened = await openScyllaStores({
      contactPoints: CQL_CONTACT.split(','),
      localDataCenter: process.env.SCYLLA_LOCAL_DC ?? 'datacenter1',
      keyspace: KEYSPACE,
    });
    stores = opened;
    nc = await connect({ servers: NATS_URL, timeout: 5000 });
    const jsm: JetStreamManager = await jetstreamManager(nc);
    const { cluster } = stack;
    const gateway = cluster.gateways[0]!;
    const messaging = new WireMessaging((user) => stack.connect(user));
    rig = {
      messaging,
      stores: opened,
      tenant: cluster.tenant,
      setTiers: (tiers) => putTiers(gateway.httpUrl, tiers),
      drained: () => jobsDrained(jsm, cluster.namespace),
      watchPushes: (users) => messaging.watchPushes(users),
      indexMayTrail: true,
    };
  }, 60_000);

  afterAll(async () => {
    await nc?.close();
    await stores?.close();
    process.stdout.write(`[copy-holders.model.distributed] ${runs} runs: ${JSON.stringify(total)}\n`);
  });

  afterEach(({ task }) => {
    if (task.result?.state === 'fail') console.log(`process logs:\n${stack.cluster.report()}`);
  });

  const run = async (ops: ModelOp[]) => addCopyHolderCounts(total, await runCopyHolderModel(rig, `r${++runs}`, ops));

  describe('copy holders, as a model, on the distributed stack', () => {
    it('recall and edit reach exactly the copy holders; every view agrees with the recount', async () => {
      // No shrinking: each replay is seconds of real processes; the seed and the run's ops are reported.
      await fc.assert(fc.asyncProperty(copyHolderRunArb(OPS), run), { numRuns: RUNS, endOnFailure: true });
    }, 600_000);

    for (const pinned of PINNED_COPY_HOLDER_RUNS) it(`pinned: ${pinned.name}`, () => run(pinned.ops), 60_000);
  });
}
