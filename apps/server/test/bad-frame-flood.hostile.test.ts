/**
 * Bad frames are charged to their sender (embedded server): four sockets each sending 19
 * malformed 64 KB frames and one valid frame, as fast as the server reads and reconnecting when
 * closed, must not slow another user's sync beyond 2x its unloaded p99. The flood runs in its
 * own process; unloaded and flooded windows alternate in one run; the bound is on the median of
 * the window pairs' ratios (sync-latency.ts); the figures are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '@seqline/protocol';
import { compareUnderFlood, describeLatency } from '../../gateway/test/support/sync-latency.ts';
import { appinfo, SECRET, startTestServer, TestClient, type TestServer } from './harness.ts';

let s: TestServer;
const open: TestClient[] = [];
// The production defaults (200/s, burst 400), not the harness's unlimited rate.
beforeAll(async () => {
  s = await startTestServer({ SEQLINE_RATE_PER_SEC: '200', SEQLINE_RATE_BURST: '400' });
});
afterAll(async () => {
  for (const c of open) c.close();
  await s.stop();
});

describe('a bad-frame flood is charged to its senders (embedded)', () => {
  it("keeps another user's sync p99 within 2x of unloaded; the flooders are refused and closed", async () => {
    const [victim, friend] = [await TestClient.connect(s.url, 'victim'), await TestClient.connect(s.url, 'friend')];
    open.push(victim, friend);
    for (let i = 0; i < 30; i++) await friend.ok('send', { appinfo: appinfo(), to: { user: 'victim' }, type: 'text', body: { i } });
    const tokens = await Promise.all(['m1', 'm2', 'm3', 'm4'].map((user) => issueToken({ secret: SECRET, user, ttlSeconds: 600 })));

    const r = await compareUnderFlood(async () => (await victim.call('sync', { maxSeq: 0, limit: 30 })).ok, { url: s.url, tokens });

    console.log(`embedded sync unloaded: ${describeLatency(r.unloaded)}`);
    console.log(
      `embedded sync under the bad-frame flood: ${describeLatency(r.flooded)}; p99 ratio ${r.ratio.toFixed(2)}; per window pair ${r.windowRatios.map((x) => x.toFixed(2)).join(' ')}, median ${r.medianWindowRatio.toFixed(2)}`,
    );
    console.log(`flood: ${JSON.stringify(r.flood)}`);
    expect(r.unloaded.failures + r.flooded.failures).toBe(0);
    expect(r.flood.connects).toBeGreaterThanOrEqual(4); // the flood did run
    expect(r.flood.closes['1008']).toBeGreaterThanOrEqual(4); // every flooder was cut off
    expect(r.flood.refusedUpgrades).toBeGreaterThan(0); // and held off when it came back
    expect(r.medianWindowRatio).toBeLessThanOrEqual(2);
    // Nothing of the flood was stored: the victim's inbox is what the friend sent.
    expect((await victim.syncAll()).map((e) => e.from)).toEqual(Array.from({ length: 30 }, () => 'friend'));
  }, 60_000);
});
