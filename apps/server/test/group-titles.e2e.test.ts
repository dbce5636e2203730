/**
 * Conversation titles and group.rename (./group-title-scenarios.ts) against the embedded server;
 * the tiers are lowered live so that 3 or 4 members make a write-fanout group and 5 a huge one.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { describeGroupTitles } from './group-title-scenarios.ts';
import { startTestServer, TestClient, type TestServer } from './harness.ts';

let s: TestServer;
const open: TestClient[] = [];
let users = 0;

beforeAll(async () => {
  s = await startTestServer();
  await s.settings.update({ tiers: { smallBelow: 3, largeBelow: 5, hysteresis: 0 } });
});
afterAll(async () => {
  for (const c of open) c.close();
  await s.stop();
});

describeGroupTitles('embedded', () => ({
  async connect(user) {
    const c = await TestClient.connect(s.url, user);
    open.push(c);
    return c;
  },
  user: (prefix) => `${prefix}${++users}`,
  async hugeGroup(owner, members) {
    const fillers = [`off${++users}`, `off${++users}`];
    const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members: [...members, ...fillers] });
    expect(r.tier).toBe('huge');
    return { group: r.group, offlineMember: fillers[0]! };
  },
}));
