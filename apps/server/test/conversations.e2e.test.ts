/** The v1.1 conversation scenarios (./conversation-scenarios.ts) against the embedded server. */
import { afterAll, beforeAll } from 'vitest';
import { describeConversations } from './conversation-scenarios.ts';
import { startTestServer, TestClient, type TestServer } from './harness.ts';

let s: TestServer;
const open: TestClient[] = [];
let users = 0;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  for (const c of open) c.close();
  await s.stop();
});

describeConversations('embedded', () => ({
  async connect(user) {
    const c = await TestClient.connect(s.url, user);
    open.push(c);
    return c;
  },
  user: (prefix) => `${prefix}${++users}`,
}));
