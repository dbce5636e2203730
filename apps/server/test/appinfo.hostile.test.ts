/** Appinfo ownership and rights-when-used attacks against the embedded server (scenarios in hostile/). */
import { afterAll, beforeAll } from 'vitest';
import { startTestServer, TestClient, type TestServer } from './harness.ts';
import { describeAppinfoAttacks } from './hostile/appinfo-attacks.ts';

let server: TestServer;
const open: TestClient[] = [];
let n = 0;
beforeAll(async () => { server = await startTestServer(); });
afterAll(async () => { for (const c of open) c.close(); await server.stop(); });

describeAppinfoAttacks('embedded', () => ({
  user: (prefix) => `${prefix}${++n}`,
  connect: async (user) => {
    const c = await TestClient.connect(server.url, user);
    open.push(c);
    return c;
  },
}));
