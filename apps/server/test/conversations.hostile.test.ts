/** The v1.1 conversation attacks (./hostile/conversation-attacks.ts) against the embedded server. */
import { afterAll, beforeAll } from 'vitest';
import { startTestServer, TestClient, type TestServer } from './harness.ts';
import { describeConversationAttacks } from './hostile/conversation-attacks.ts';

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

describeConversationAttacks(
  'embedded',
  () => ({
    async connect(user) {
      const c = await TestClient.connect(s.url, user);
      open.push(c);
      return c;
    },
    user: (prefix) => `${prefix}${++users}`,
  }),
  () => s.clock,
);
