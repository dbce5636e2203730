/**
 * Class 5 of docs/security.md against the embedded server (`npm start`: LMDB, one process):
 * bodies with "__proto__" keys, edge numbers and deep nesting come back exactly from every read
 * path; unpaired surrogates are refused up front (scenarios in ./hostile/roundtrip-scenarios.ts).
 */
import { afterAll, beforeAll } from 'vitest';
import { startTestServer, TestClient, type TestServer } from './harness.ts';
import { describeRoundTrip } from './hostile/roundtrip-scenarios.ts';

let s: TestServer;
const open: TestClient[] = [];
let users = 0;

beforeAll(async () => {
  s = await startTestServer();
  // Three members make a group huge (read-fanout), two make it large (write-fanout, queued).
  await s.settings.update({ tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } });
});
afterAll(async () => {
  for (const c of open) c.close();
  await s.stop();
});

describeRoundTrip('embedded', () => ({
  async connect(user) {
    const c = await TestClient.connect(s.url, user);
    open.push(c);
    return c;
  },
  httpUrl: `http://127.0.0.1:${s.port}`,
  tenant: 'default',
  user: (prefix) => `${prefix}${++users}`,
  hugeFiller: [],
  numRuns: 200,
}));
