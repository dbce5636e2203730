/**
 * The distributed gateway has no demo page and no dev token route: a dev token is signed
 * with the deployment's secret, so only the single-process dev mode may hand one out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../gateway/test/harness.ts';
import { Cluster } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'distributed gateway without dev routes')) {
  describe('distributed gateway (1 gateway + 1 worker as processes)', () => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await Cluster.start({ workers: 1, gateways: 1 });
    }, 240_000);
    afterAll(async () => {
      await cluster?.close();
    });

    it('answers POST /dev/token from loopback with 404, and serves no page at /', async () => {
      const gateway = cluster.gateways[0];
      if (!gateway) throw new Error('no gateway started');
      const port = gateway.port ?? 0;
      const token = await http(`${gateway.httpUrl}/dev/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', host: `localhost:${port}` },
        body: '{"user":"alice"}',
      });
      expect(token.status).toBe(404);
      expect(JSON.parse(token.body)).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
      for (const path of ['/', '/index.html', '/app.js']) expect((await http(`${gateway.httpUrl}${path}`)).status, path).toBe(404);
      expect((await http(`${gateway.httpUrl}/healthz`)).status).toBe(200);
      expect(gateway.records.some((r) => r.msg.startsWith('dev token route is on'))).toBe(false);
    });
  });
}
