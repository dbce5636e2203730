import { afterEach, describe, expect, it } from 'vitest';
import { distributedEnvSchema, loadDistributedConfig } from '@seqline/runtime';
import { maxBoundNames } from '@seqline/runtime/bounds';
import { workerBounds } from '../src/worker-bounds.ts';
import { startWorkerHttp, type WorkerHttp } from '../src/worker-http.ts';

/** A shard source with no shards and nothing remembered. */
const idle = {
  servingShards: () => [],
  readiness: () => ({ ready: true, serving: [], pending: [] }),
  rememberedAppinfos: 0,
  rememberedSeqKeys: 0,
  cachedInboxes: 0,
  ownerTallies: {
    indexCatchUps: { pending: 0, caughtUp: 0, gaveUp: 0, dropped: 0 },
    unsettledAppends: { held: 0, landed: 0, dropped: 0 },
    unsettledAbandoned: 0,
    catchUpsHandedOn: 0,
  },
};

describe('worker HTTP endpoint', () => {
  let http: WorkerHttp | undefined;
  afterEach(async () => {
    await http?.close();
    http = undefined;
  });

  it('answers /healthz with the shards served and /metrics with them and the process metrics', async () => {
    let served = [1, 5, 9];
    http = await startWorkerHttp({
      port: 0,
      host: '127.0.0.1',
      shards: {
        ...idle,
        servingShards: () => served,
        rememberedAppinfos: 42,
        rememberedSeqKeys: 7,
        cachedInboxes: 5,
        ownerTallies: {
          indexCatchUps: { pending: 3, caughtUp: 11, gaveUp: 1, dropped: 2 },
          unsettledAppends: { held: 4, landed: 13, dropped: 6 },
          unsettledAbandoned: 8,
          catchUpsHandedOn: 9,
        },
      },
      pools: () => ({ large: { running: 2, waiting: 3 }, notify: { running: 0, waiting: 0 } }),
      push: () => ({ published: { inbox: 12, gateway: 4 }, presence: { ready: true, gateways: 2, inboxes: 37 } }),
    });
    const base = `http://127.0.0.1:${http.port}`;
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, shards: 3 });
    served = [1];
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^seqline_worker_shards_served 1$/m);
    expect(metrics).toMatch(/^seqline_worker_recent_appinfos 42$/m);
    expect(metrics).toMatch(/^seqline_worker_seq_keys 7$/m);
    expect(metrics).toMatch(/^seqline_worker_cached_inboxes 5$/m);
    expect(metrics).toMatch(/^seqline_worker_index_catch_ups_pending 3$/m);
    expect(metrics).toMatch(/^seqline_worker_index_catch_ups_total\{outcome="caught_up"\} 11$/m);
    expect(metrics).toMatch(/^seqline_worker_index_catch_ups_total\{outcome="gave_up"\} 1$/m);
    expect(metrics).toMatch(/^seqline_worker_index_catch_ups_total\{outcome="dropped"\} 2$/m);
    expect(metrics).toMatch(/^seqline_worker_index_catch_ups_total\{outcome="handed_on"\} 9$/m);
    expect(metrics).toMatch(/^seqline_worker_unsettled_entries 4$/m);
    expect(metrics).toMatch(/^seqline_worker_unsettled_entries_total\{outcome="landed"\} 13$/m);
    expect(metrics).toMatch(/^seqline_worker_unsettled_entries_total\{outcome="dropped"\} 6$/m);
    expect(metrics).toMatch(/^seqline_worker_unsettled_entries_total\{outcome="abandoned"\} 8$/m);
    expect(metrics).toMatch(/^seqline_worker_jobs_running\{pool="large"\} 2$/m);
    expect(metrics).toMatch(/^seqline_worker_jobs_waiting\{pool="large"\} 3$/m);
    expect(metrics).toMatch(/^seqline_worker_jobs_running\{pool="notify"\} 0$/m);
    expect(metrics).toMatch(/^seqline_worker_push_publishes_total\{via="inbox"\} 12$/m);
    expect(metrics).toMatch(/^seqline_worker_push_publishes_total\{via="gateway"\} 4$/m);
    expect(metrics).not.toContain('seqline_worker_push_routing_ready');
    expect(metrics).toMatch(/^seqline_worker_presence_gateways 2$/m);
    expect(metrics).toMatch(/^seqline_worker_presence_inboxes 37$/m);
    expect(metrics).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(404);
  });

  it('reports every SEQLINE_MAX_* setting of the config schema as seqline_bound_limit, and what it holds as seqline_bound_fill', async () => {
    const names = maxBoundNames(distributedEnvSchema);
    expect(names).toEqual(expect.arrayContaining(['SEQLINE_MAX_SEQ_KEYS', 'SEQLINE_MAX_NOTIFY_ITEMS']));
    // Each bound set to a value of its own, so a gauge reporting another bound's value fails.
    const env = Object.fromEntries(names.map((name, i) => [name, String(1000 + i)]));
    const config = loadDistributedConfig({ SEQLINE_SECRET: 'worker-http-test-secret', ...env });
    const shards = { ...idle, rememberedAppinfos: 42, rememberedSeqKeys: 7, cachedInboxes: 5 };
    http = await startWorkerHttp({
      port: 0,
      host: '127.0.0.1',
      shards,
      processMetrics: false,
      bounds: workerBounds(config, { shards, notifier: { stats: () => ({ heldItems: 9 }) } }),
    });
    const metrics = await (await fetch(`http://127.0.0.1:${http.port}/metrics`)).text();
    for (const name of names) {
      expect(metrics, name).toMatch(new RegExp(`^seqline_bound_limit\\{bound="${name}"\\} ${env[name]}$`, 'm'));
      expect(metrics, name).toMatch(new RegExp(`^seqline_bound_fill\\{bound="${name}"\\} \\d+$`, 'm'));
    }
    expect(metrics).toMatch(/^seqline_bound_fill\{bound="SEQLINE_MAX_SEQ_KEYS"\} 7$/m);
    expect(metrics).toMatch(/^seqline_bound_fill\{bound="SEQLINE_MAX_RECENT_APPINFOS"\} 42$/m);
    expect(metrics).toMatch(/^seqline_bound_fill\{bound="SEQLINE_MAX_CACHED_INBOXES"\} 5$/m);
    expect(metrics).toMatch(/^seqline_bound_fill\{bound="SEQLINE_MAX_NOTIFY_ITEMS"\} 9$/m);
  });

  it('answers /readyz 200 only while it serves every shard it should; /healthz stays 200 meanwhile', async () => {
    let state = { ready: false, serving: [3], pending: [1, 2] };
    http = await startWorkerHttp({
      port: 0,
      host: '127.0.0.1',
      shards: { ...idle, servingShards: () => state.serving, readiness: () => state },
      processMetrics: false,
    });
    const base = `http://127.0.0.1:${http.port}`;
    const waiting = await fetch(`${base}/readyz`);
    expect(waiting.status).toBe(503);
    expect(await waiting.json()).toEqual({ ok: false, shards: 1, pending: 2 });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    state = { ready: true, serving: [1, 2, 3], pending: [] };
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, shards: 3 });
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${base}/readyz/`)).status).toBe(404);
  });

  it('fails to start on a port already taken, instead of running without the endpoint', async () => {
    http = await startWorkerHttp({ port: 0, host: '127.0.0.1', shards: idle, processMetrics: false });
    await expect(startWorkerHttp({ port: http.port, host: '127.0.0.1', shards: idle, processMetrics: false })).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
  });
});
