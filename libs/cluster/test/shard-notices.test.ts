/** The `serving` notices that cut a caller's retry backoff short, on the real NATS. */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { announce, ServingWatch } from '../src/shard-notices.ts';
import { MemoryLogger } from './support/doubles.ts';
import { probeServices, uniqueId, useSuiteServices } from './support/services.ts';

const services = await probeServices();

describe.skipIf(!services.ok)('ServingWatch', () => {
  const svc = useSuiteServices();

  it("ends a sleep when the shard's owner announces itself; other shards and malformed notices do not", async () => {
    const prefix = uniqueId('test.notices.');
    const watch = new ServingWatch(svc.nc, prefix);
    try {
      const t0 = performance.now();
      const woken = watch.sleep(3, 10_000);
      const other = watch.sleep(4, 600);
      // Let the lazy subscription reach the server before announcing.
      await svc.nc.flush();
      for (const junk of ['', 'not json', '{"owner":"x"}', '{"owner":"x","shard":"3"}', '{"owner":"x","shard":3.5}']) {
        svc.nc.publish(`${prefix}.serving`, junk);
      }
      announce(svc.nc, prefix, 'serving', { owner: 'host-b', shard: 5 }, new MemoryLogger());
      announce(svc.nc, prefix, 'serving', { owner: 'host-b', shard: 3 }, new MemoryLogger());
      await woken;
      expect(performance.now() - t0).toBeLessThan(2000);
      await other;
      expect(performance.now() - t0).toBeGreaterThanOrEqual(590); // shard 4 slept its full time
    } finally {
      watch.close();
    }
  });

  it('close ends every sleep at once', async () => {
    const watch = new ServingWatch(svc.nc, uniqueId('test.notices.'));
    const t0 = performance.now();
    const sleeping = watch.sleep(1, 10_000);
    watch.close();
    await sleeping;
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
