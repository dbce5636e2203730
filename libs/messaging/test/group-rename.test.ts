/**
 * group.rename over the real embedded engine and workers, where the wire tests cannot reach: a
 * rename cut off between its record and its notice is finished by its retry (and no inbox holds
 * a notice twice), and renames racing additions from another process (two Messaging instances,
 * so no shared membership lock) still leave every member's title on the group's name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKey, inboxKey, type Entry, type GroupStore, type JobEnqueue, type WorkQueue } from '@seqline/core';
import { createMessaging, startWorkers, type Caller, type Messaging, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';
import { drained } from './support/drained.ts';

let rig: EmbeddedRig;
let messaging: Messaging;
let workers: Workers;
let n = 0;
const T = 't';
const as = (user: string): Caller => ({ tenant: T, user });
const uniq = (p: string) => `${p}${++n}`;

beforeAll(async () => {
  rig = await openEmbeddedRig('group-rename');
  messaging = createMessaging(rig.deps);
  workers = await startWorkers(rig.deps);
});
afterAll(async () => {
  workers.stop();
  await rig.close();
});

const inboxOf = (user: string): Promise<Entry[]> => rig.engine.timeline.readAfter({ inbox: inboxKey(T, user), afterSeq: 0, limit: 10_000 });
const renames = async (user: string, group: string) =>
  (await inboxOf(user)).filter((e) => e.kind === 'group' && e.type === 'group.rename' && e.conv.id === group);
async function titleOf(user: string, group: string): Promise<string | undefined> {
  const list = await messaging.conversations(as(user), { limit: 500, lastMessages: 0 });
  return list.convs.find((c) => c.state.conv.type === 'group' && c.state.conv.id === group)?.state.title;
}

/** Messaging deps whose group store has some methods replaced (another process's view of the same store). */
function withGroups(replaced: Partial<GroupStore>): typeof rig.deps {
  const groups = new Proxy(rig.engine.groups, {
    get(target, prop) {
      const own = (replaced as Record<string | symbol, unknown>)[prop];
      if (own !== undefined) return own;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...rig.deps, stores: { ...rig.deps.stores, groups } };
}

/** The rig's queue, refusing the first group-event job it is handed (a crash before the notice was enqueued). */
function queueFailingOnce(queue: WorkQueue): WorkQueue {
  let failed = false;
  return new Proxy(queue, {
    get(target, prop, receiver) {
      if (prop !== 'enqueue') return Reflect.get(target, prop, receiver) as unknown;
      return async (input: JobEnqueue) => {
        if (!failed && input.id.startsWith('group:')) {
          failed = true;
          throw new Error('enqueue lost');
        }
        return target.enqueue(input);
      };
    },
  });
}

describe('group.rename on the embedded engine', () => {
  it('a rename cut off before its notice is finished by its retry; no inbox holds the notice twice', async () => {
    const [alice, bob, carol] = [uniq('a'), uniq('b'), uniq('c')];
    const { id: group } = await messaging.createGroup(as(alice), { name: 'team', members: [bob, carol] });
    await drained(rig);
    const crashing = createMessaging({ ...rig.deps, queue: queueFailingOnce(rig.queue) });
    await expect(crashing.renameGroup(as(alice), { id: group, name: 'crew' })).rejects.toThrow('enqueue lost');
    // The record took the name; no member heard of it.
    expect(await rig.engine.groups.getGroup(groupKey(T, group))).toMatchObject({ name: 'crew', nameRev: 1 });
    await drained(rig);
    for (const user of [alice, bob, carol]) {
      expect(await renames(user, group)).toEqual([]);
      expect(await titleOf(user, group)).toBe('team');
    }
    // The client retries: the name is already there, the notice goes out now, and again changes nothing.
    for (let i = 0; i < 2; i++) {
      expect(await crashing.renameGroup(as(alice), { id: group, name: 'crew' })).toEqual({ id: group, name: 'crew' });
      await drained(rig);
    }
    for (const user of [alice, bob, carol]) {
      const notices = await renames(user, group);
      expect(notices.map((e) => e.body)).toEqual([{ event: 'rename', group, actor: alice, name: 'crew', nameRev: 1 }]);
      expect(await titleOf(user, group)).toBe('crew');
    }
    expect(await rig.engine.groups.getGroup(groupKey(T, group))).toMatchObject({ name: 'crew', nameRev: 1 });
  });

  it('an addition by another process that read the group before a rename, and writes after the rename listed the members, still names the new name', async () => {
    const alice = uniq('a');
    const joiner = uniq('j');
    const { id: group } = await messaging.createGroup(as(alice), { name: 'before', members: [uniq('m')] });
    await drained(rig);
    let atWrite = (): void => undefined;
    const adderAtWrite = new Promise<void>((resolve) => (atWrite = resolve));
    let open = (): void => undefined;
    const listed = new Promise<void>((resolve) => (open = resolve));
    // The adder holds its membership write until the renamer has listed the members it tells.
    const adder = createMessaging(
      withGroups({ addMembers: async (...args) => (atWrite(), await listed, rig.engine.groups.addMembers(...args)) }),
    );
    const renamer = createMessaging(
      withGroups({ listMembers: async (key) => ((list) => (open(), list))(await rig.engine.groups.listMembers(key)) }),
    );
    const adding = adder.addMembers(as(alice), group, [joiner]);
    await adderAtWrite;
    await renamer.renameGroup(as(alice), { id: group, name: 'after' });
    await adding;
    await drained(rig);
    expect(await renames(joiner, group)).toEqual([]); // not a member when the rename listed them
    expect(await titleOf(joiner, group)).toBe('after'); // so its own add notice carries the new name
  });

  it('renames racing additions from another process: every member ends on the group name', async () => {
    const alice = uniq('a');
    const { id: group } = await messaging.createGroup(as(alice), { name: 'r0', members: [uniq('m')] });
    // Two processes: each Messaging has its own membership lock.
    const [renamer, adder] = [createMessaging(rig.deps), createMessaging(rig.deps)];
    const added: string[] = [];
    for (let round = 1; round <= 12; round++) {
      const joiner = uniq('j');
      added.push(joiner);
      await Promise.all([renamer.renameGroup(as(alice), { id: group, name: `r${round}` }), adder.addMembers(as(alice), group, [joiner])]);
    }
    await drained(rig);
    const record = await rig.engine.groups.getGroup(groupKey(T, group));
    expect(record).toMatchObject({ name: 'r12', nameRev: 12 });
    const members = await rig.engine.groups.listMembers(groupKey(T, group));
    expect(members).toEqual(expect.arrayContaining(added));
    for (const user of members) expect(await titleOf(user, group), user).toBe('r12');
  });
});
