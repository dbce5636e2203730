/**
 * One gateway and one worker as processes on the real services, started before the file's tests
 * (and ready: a first send went through) and stopped after; every client connected through
 * `connect` is closed with it. For the hostile suites that run their scenarios in both modes.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { TestClient, waitFor } from '../../../server/test/harness.ts';
import { Cluster, uniqueId } from './cluster.ts';

/**
 * 2 000 users who never connect: with them a group is huge under the default tiers, the ones
 * the stack runs with (the settings row is shared by the keyspace, so no test lowers them).
 */
export function offlineFillers(): string[] {
  return Array.from({ length: 2_000 }, (_, i) => `${uniqueId('off')}${i}`);
}

/** `owner` creates a huge group of `members` and offline fillers (checked: the tier is huge). */
export async function createHugeGroup(owner: TestClient, members: string[]): Promise<{ group: string; fillers: string[] }> {
  const fillers = offlineFillers();
  const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members: [...members, ...fillers] });
  expect(r.tier).toBe('huge');
  return { group: r.group, fillers };
}

export interface OneNodeCluster {
  readonly cluster: Cluster;
  connect(user: string): Promise<TestClient>;
}

/** `env`: extra environment of both processes, read when the cluster starts (after earlier beforeAll hooks). */
export function useOneNodeCluster(options: { env?: () => Record<string, string> } = {}): OneNodeCluster {
  let cluster: Cluster | undefined;
  const open: TestClient[] = [];
  const handle: OneNodeCluster = {
    get cluster() {
      if (!cluster) throw new Error('the cluster is not started yet (use it inside a test)');
      return cluster;
    },
    async connect(user) {
      const c = await TestClient.connect(handle.cluster.gateways[0]!.url, user, handle.cluster.tenant);
      open.push(c);
      return c;
    },
  };
  beforeAll(async () => {
    cluster = await Cluster.start({ workers: 1, gateways: 1, ...(options.env && { env: options.env() }) });
    const probe = await handle.connect('warmup');
    await waitFor(
      async () => (await probe.call('send', { appinfo: 'warmup', to: { user: 'warmup2' }, type: 'text', body: {} })).ok,
      30_000,
      'a first send',
    );
  }, 240_000);
  afterAll(async () => {
    for (const c of open) c.close();
    await cluster?.close();
  }, 60_000);
  return handle;
}
