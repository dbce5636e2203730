/**
 * Read-fanout groups in the conversation list (./group-conversation-scenarios.ts) against the
 * embedded server; the tiers are lowered live so that a 3-member group is huge.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { describeGroupConversations } from './group-conversation-scenarios.ts';
import { startTestServer, TestClient, type TestServer } from './harness.ts';

let s: TestServer;
const open: TestClient[] = [];
let users = 0;

beforeAll(async () => {
  s = await startTestServer();
  await s.settings.update({ tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } });
});
afterAll(async () => {
  for (const c of open) c.close();
  await s.stop();
});

describeGroupConversations('embedded', () => ({
  async connect(user) {
    const c = await TestClient.connect(s.url, user);
    open.push(c);
    return c;
  },
  user: (prefix) => `${prefix}${++users}`,
  async hugeGroup(owner, members) {
    const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members });
    expect(r.tier).toBe('huge');
    return r.group;
  },
}));
