/**
 * The copy-holder model test, embedded: LMDB, the in-process queue and workers. A random life
 * of a group — members added, removed and re-added, tier thresholds switched live so membership
 * changes move it between write- and read-fanout, sends with mentions (some racing a membership
 * change, many in one millisecond), recalls by sender and admin, edits retried by editId —
 * then, with every job done: recall and edit entries sit in exactly the inboxes holding a copy,
 * a send's copies are the members when it was sent (or, read-fanout, the sender and the members
 * named), and every view of every user (conversations with messages and last, history {conv},
 * sync and its convs, the convs of every push) agrees with core's recount of their inbox plus
 * the stream rows their windows allow. The driver and the oracle are @seqline/testing's
 * (copy-holders/); the distributed run is apps/worker/test/copy-holders.model.distributed.test.ts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DEFAULT_LIMITS, inboxKey, type Clock, type PushMessage, type TierThresholds } from '@seqline/core';
import {
  addCopyHolderCounts,
  copyHolderRunArb,
  PINNED_COPY_HOLDER_RUNS,
  runCopyHolderModel,
  type CopyHolderCounts,
  type CopyHolderRig,
  type ModelOp,
  type ModelPush,
} from '@seqline/testing';
import { createMessaging, startWorkers, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';
import { drained } from './support/drained.ts';

const TENANT = 'model';
/** Ops share a millisecond until a `tick` op moves the clock: membership changes and sends tie. */
const clock: Clock & { t: number } = { t: Date.now(), now: () => clock.t };
let tiers: TierThresholds | undefined;

let rig: EmbeddedRig;
let workers: Workers;
let modelRig: CopyHolderRig;
let runs = 0;
const total: Partial<CopyHolderCounts> = {};

beforeAll(async () => {
  rig = await openEmbeddedRig('holders-model', { pushConvsWaitMs: 10_000 });
  const deps = {
    ...rig.deps,
    policy: { ...rig.deps.policy, tiers: () => tiers ?? rig.deps.policy.tiers(), limits: () => DEFAULT_LIMITS },
    env: { ...rig.deps.env, clock },
  };
  workers = await startWorkers(deps);
  modelRig = {
    messaging: createMessaging(deps),
    stores: rig.engine,
    tenant: TENANT,
    setTiers: (next) => {
      tiers = next;
      return Promise.resolve();
    },
    tick: () => {
      clock.t += 1;
    },
    drained: () => drained(rig),
    watchPushes: (users) => {
      const pushes = new Map<string, ModelPush[]>();
      const stops = users.map((u) => {
        const got: ModelPush[] = [];
        pushes.set(u, got);
        // A group.push carries stream messages and no convs: not an inbox push.
        return rig.deps.push.subscribe({
          inbox: inboxKey(TENANT, u),
          onPush: (p: PushMessage) => void (p.group === undefined && got.push(p)),
        });
      });
      return Promise.resolve({ pushes: () => pushes, stop: () => stops.forEach((stop) => stop()) });
    },
    indexMayTrail: false,
  };
});
afterAll(async () => {
  workers.stop();
  await rig.close();
  process.stdout.write(`[copy-holders.model] ${runs} runs: ${JSON.stringify(total)}\n`);
});

const run = async (ops: ModelOp[]) => addCopyHolderCounts(total, await runCopyHolderModel(modelRig, `r${++runs}`, ops));

describe('copy holders, as a model', () => {
  it('recall and edit reach exactly the copy holders; every view agrees with the recount', async () => {
    await fc.assert(fc.asyncProperty(copyHolderRunArb({ minLength: 10, maxLength: 40 }), run), { numRuns: 40 });
  }, 600_000);

  for (const pinned of PINNED_COPY_HOLDER_RUNS) it(`pinned: ${pinned.name}`, () => run(pinned.ops));
});
