/** The offline-notification scenarios (offline-notify-scenarios.ts) against the embedded server. */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestServer, TestClient, type TestServer } from './harness.ts';
import { describeOfflineNotify, NOTIFY_SECRET, notifyEnv } from './offline-notify-scenarios.ts';

let server: TestServer;
let receiver: HookReceiver;
const open: TestClient[] = [];
let ids = 0;

beforeAll(async () => {
  receiver = await startHookReceiver({ secret: NOTIFY_SECRET });
  server = await startTestServer(notifyEnv(receiver));
  // A 3-member group is huge (read-fanout).
  await server.settings.update({ tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } });
});
afterAll(async () => {
  for (const c of open) c.close();
  await server.stop();
  await receiver.close();
});

describeOfflineNotify('embedded', () => ({
  connect: async (user) => {
    const c = await TestClient.connect(server.url, user);
    open.push(c);
    return c;
  },
  id: (prefix) => `${prefix}${++ids}`,
  receiver,
  async hugeGroup(owner, members) {
    const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members });
    expect(r.tier).toBe('huge');
    return r.group;
  },
}));
