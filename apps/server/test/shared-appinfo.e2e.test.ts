/** Two senders, one appinfo, one recipient: against the embedded server (scenarios in shared-appinfo-scenarios.ts). */
import { afterAll, beforeAll, expect } from 'vitest';
import { DEFAULT_TIER_THRESHOLDS } from '@seqline/core';
import { startTestServer, TestClient, type TestServer } from './harness.ts';
import { describeSharedAppinfo } from './shared-appinfo-scenarios.ts';

let server: TestServer;
const open: TestClient[] = [];
let n = 0;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const c of open) c.close();
  await server.stop();
});

describeSharedAppinfo('embedded', () => ({
  user: (prefix) => `${prefix}${++n}`,
  connect: async (user) => {
    const c = await TestClient.connect(server.url, user);
    open.push(c);
    return c;
  },
  // Tiers lowered live for the creation only: a group's tier is decided when it is created.
  async hugeGroup(owner, members) {
    await server.settings.update({ tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } });
    try {
      const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members });
      expect(r.tier).toBe('huge');
      return r.group;
    } finally {
      await server.settings.update({ tiers: DEFAULT_TIER_THRESHOLDS });
    }
  },
}));
