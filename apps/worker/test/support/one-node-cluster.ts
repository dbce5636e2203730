/**
 * One gateway and one worker as processes on the real services, started before the file's tests
 * (and ready: a first send went through) and stopped after; every client connected through
 * `connect` is closed with it. For the hostile suites that run their scenarios in both modes.
 */
import { afterAll, beforeAll } from 'vitest';
import { TestClient, waitFor } from '../../../server/test/harness.ts';
import { Cluster } from './cluster.ts';

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
