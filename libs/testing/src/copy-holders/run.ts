/**
 * One run of the copy-holder model, the same in both modes: a fresh group, its users' pushes
 * collected from the start, the ops applied one by one (every job done after each), then the
 * oracle. The modes differ only in the rig: the messaging API in process or over the wire, the
 * stores it reads the truth from, how tiers are switched and how "every job done" is known.
 */
import fc from 'fast-check';
import { inboxKey, type TierThresholds } from '@seqline/core';
import { GroupModel, HIGH_TIERS, modelOpArb, type ModelCounts, type ModelMessaging, type ModelOp, type ModelStores } from './model.ts';
import { TailSyncs } from './convs-check.ts';
import { checkModel, type ModelPush, type OracleCounts } from './oracle.ts';

export interface CopyHolderRig {
  messaging: ModelMessaging;
  stores: ModelStores;
  tenant: string;
  /** Switches the live thresholds (for every process); the next membership change applies them. */
  setTiers(tiers: TierThresholds): Promise<void>;
  /** Moves the clock one millisecond; absent on a real clock. */
  tick?: () => void;
  /** Until every job enqueued so far has run (a bounded wait on a count, then a failure). */
  drained(): Promise<void>;
  /** Starts collecting the inbox pushes of `users`: `pushes()` is what each got so far; `stop` ends it. */
  watchPushes(users: readonly string[]): Promise<{ pushes(): Map<string, ModelPush[]>; stop(): void }>;
  /** The conversation index may trail the entries (distributed): oracle.ts. */
  indexMayTrail: boolean;
}

/** `tailSyncs`: syncs made while jobs may still run; `tailSyncsPending`: those naming a conversation pending. */
export type CopyHolderCounts = ModelCounts & OracleCounts & { tailSyncs: number; tailSyncsPending: number };

/** Adds a run's counts to a file's total (to print: a model test that never switched proves little). */
export function addCopyHolderCounts(total: Partial<CopyHolderCounts>, run: CopyHolderCounts): void {
  for (const [k, v] of Object.entries(run) as Array<[keyof CopyHolderCounts, number]>) total[k] = (total[k] ?? 0) + v;
}

/** Runs `ops` on a fresh group named by `prefix` (unique per run on the rig's stores), then checks everything. */
export async function runCopyHolderModel(rig: CopyHolderRig, prefix: string, ops: readonly ModelOp[]): Promise<CopyHolderCounts> {
  await rig.setTiers(HIGH_TIERS);
  let tail: TailSyncs | undefined;
  const model = new GroupModel({
    messaging: rig.messaging,
    tenant: rig.tenant,
    prefix,
    setTiers: (tiers) => rig.setTiers(tiers),
    ...(rig.tick && { tick: rig.tick }),
    // Every user syncs on from its last answer right after each op, its jobs perhaps still running.
    drained: async () => {
      await tail?.check();
      await rig.drained();
    },
    appinfoAt: async (user, seq) => {
      const e = await rig.stores.timeline.getEntry({ inbox: inboxKey(rig.tenant, user), seq });
      if (e === null) throw new Error(`no entry ${seq} in ${user}'s inbox`);
      return e.appinfo;
    },
  });
  tail = new TailSyncs(rig, model.users);
  const watch = await rig.watchPushes(model.users);
  try {
    await model.start();
    for (const op of ops) await model.apply(op);
    await rig.drained();
    const checked = await checkModel(
      { stores: rig.stores, messaging: rig.messaging, tenant: rig.tenant, pushes: watch.pushes(), indexMayTrail: rig.indexMayTrail },
      model,
    );
    return { ...model.counts, ...checked, tailSyncs: tail.answers, tailSyncsPending: tail.pendingAnswers };
  } finally {
    watch.stop();
  }
}

/** A random run: half start with the low thresholds (the group turns huge at its first change). */
export function copyHolderRunArb(ops: { minLength: number; maxLength: number }): fc.Arbitrary<ModelOp[]> {
  return fc.tuple(fc.boolean(), fc.array(modelOpArb, ops)).map(([low, rest]): ModelOp[] => [{ t: 'tiers', low }, ...rest]);
}

/** Ops pick by index among those who can (model.ts): members start as u0 (admin), u1, u2. */
export const PINNED_COPY_HOLDER_RUNS: ReadonlyArray<{ name: string; ops: ModelOp[] }> = [
  {
    name: 'a member added and another removed in the send’s millisecond, then recall and edit',
    ops: [
      { t: 'tick' },
      { t: 'send', from: 0, mentions: undefined }, // u0
      { t: 'add', user: 0, by: 1 }, // u1 adds u3
      { t: 'remove', user: 1 }, // u2
      { t: 'recall', pick: 0, byAdmin: true },
      { t: 'send', from: 1, mentions: [2] }, // u1, naming u3
      { t: 'edit', pick: 1, withId: true },
      { t: 'retryEdit' },
    ],
  },
  {
    name: 'a huge group, a mention, the named member removed, then recalled; the admin recalls a stream message',
    ops: [
      { t: 'tiers', low: true },
      { t: 'add', user: 0, by: 0 }, // u3: four members, huge
      { t: 'add', user: 0, by: 0 }, // u4
      { t: 'tick' },
      { t: 'send', from: 1, mentions: [3] }, // u1, naming u3
      { t: 'send', from: 2, mentions: undefined }, // u2
      { t: 'tick' },
      { t: 'remove', user: 2 }, // u3
      { t: 'recall', pick: 0, byAdmin: false },
      { t: 'recall', pick: 1, byAdmin: true },
      { t: 'tiers', low: false },
      { t: 'remove', user: 2 }, // u4: three members, back to write-fanout
      { t: 'send', from: 1, mentions: undefined },
      { t: 'edit', pick: 2, withId: false },
      { t: 'edit', pick: 0, withId: true }, // recalled: skipped
    ],
  },
];
