/**
 * The k6 scripts of loadtest/ against the distributed stack (2 workers, 2 gateways on Cassandra,
 * Redis and NATS), run by tools/k6-lite (no k6 binary), the way a load tester points them at a
 * deployment: chat.js through both gateways at once over one user population (so users have a
 * socket on each gateway and pushes cross between them), then sync.js. No error, every check passed, and every send k6 saw
 * acknowledged is in its sender's inbox. Thresholds are off: latency is the benchmarks' job.
 *
 * The workers run with memory bounds far below the user population (SEQLINE_MAX_SEQ_KEYS,
 * SEQLINE_MAX_RECENT_APPINFOS, SEQLINE_MAX_CACHED_INBOXES), so they forget inboxes' seqs, heads
 * and appinfos all through the run: the inboxes must still hold strictly increasing seqs and
 * one copy of each message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServices } from '@seqline/testing';
import { SECRET } from '../../server/test/harness.ts';
import { count, expectCleanChatRun, expectCleanGroupRun, expectCleanSyncRun, runK6, type K6Run } from '../../server/test/k6-runner.ts';
import { httpSyncAll } from './support/clients.ts';
import { Cluster } from './support/cluster.ts';
import { probeAll } from './support/services.ts';

const USERS = 8;
/** Per worker, against 8 users' inboxes spread over its shards. */
const MAX_SEQ_KEYS = 3;

if (requireServices(await probeAll(), 'k6 load-test scripts against the distributed stack', 'Cassandra, Redis and NATS')) {
  describe('k6 load-test scripts against 2 gateways + 2 workers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seqline-k6-dist-'));
    let cluster: Cluster;
    let chat: K6Run[] = [];

    beforeAll(async () => {
      cluster = await Cluster.start({
        workers: 2,
        gateways: 2,
        env: { SEQLINE_MAX_SEQ_KEYS: String(MAX_SEQ_KEYS), SEQLINE_MAX_RECENT_APPINFOS: '4', SEQLINE_MAX_CACHED_INBOXES: '3' },
      });
    }, 240_000);

    afterAll(async () => {
      await cluster?.close();
      rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    const envOf = (gateway: number) => ({ SEQLINE_SECRET: SECRET, SEQLINE_URL: cluster.gateways[gateway]!.httpUrl });
    const vars = (extra: Record<string, string>) => ({ USERS: String(USERS), TENANT: cluster.tenant, ...extra });

    it('chat.js through both gateways at once: every VU upgrades, sends are acknowledged, both gateways push, no error', async () => {
      const chatVars = vars({ VUS: String(USERS), RATE: '4', DURATION: '8s', SESSION_S: '4' });
      chat = await Promise.all([0, 1].map((g) => runK6('chat.js', chatVars, envOf(g), dir, `chat-g${g + 1}`)));
      for (const run of chat) expectCleanChatRun(run, USERS);
    }, 120_000);

    it("every acknowledged send is in its sender's inbox, once, read through either gateway", async () => {
      expect(chat).toHaveLength(2);
      const acked = chat.reduce((n, run) => n + count(run, 'seqline_send_ack_ms'), 0);
      let ownCopies = 0;
      for (let u = 1; u <= USERS; u++) {
        const user = `u${u}`;
        const entries = await httpSyncAll(cluster.gateways[u % 2]!.httpUrl, cluster.tenant, user);
        // The seqs a client syncs by: strictly increasing, each entry once.
        const seqs = entries.map((e) => e.seq);
        expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
        // One copy per inbox (I3): a send to oneself is deduped into one entry too.
        const appinfos = entries.filter((e) => e.kind === 'msg').map((e) => e.appinfo);
        expect(new Set(appinfos).size).toBe(appinfos.length);
        ownCopies += entries.filter((e) => e.kind === 'msg' && e.from === user).length;
      }
      const pushed = chat.reduce((n, run) => n + count(run, 'seqline_send_push_ms'), 0);
      console.log(`k6 through 2 gateways: ${acked} sends acknowledged, ${pushed} pushes timed, ${ownCopies} sender copies stored`);
      // A send still in flight when k6 closed its socket may be stored unacknowledged: ≥, not =.
      expect(ownCopies).toBeGreaterThanOrEqual(acked);
      // The bounds held; the workers were forgetting all along, not idle.
      const seqKeys = await Promise.all(
        cluster.workers.map(async (w) => {
          const metrics = await (await fetch(`${w.httpUrl}/metrics`)).text();
          return Number(/^seqline_worker_seq_keys (\d+)$/m.exec(metrics)?.[1]);
        }),
      );
      for (const n of seqKeys) expect(n).toBeLessThanOrEqual(MAX_SEQ_KEYS);
      expect(seqKeys.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    }, 60_000);

    it('group.js through both gateways, small groups then a huge one: inbox pushes, then group.push frames; every ack stored', async () => {
      // Each k6 creates its own groups over the same users, so pushes cross between gateways;
      // the two kinds run one after the other (a user's sockets get every push of its groups).
      const small = vars({ VUS: String(USERS), GROUPS: '2', GROUP_SIZE: '6', RATE: '4', DURATION: '6s', SESSION_S: '3' });
      const smallRuns = await Promise.all([0, 1].map((g) => runK6('group.js', small, envOf(g), dir, `group-small-g${g + 1}`)));
      for (const run of smallRuns) expectCleanGroupRun(run, USERS, 'write');
      const huge = vars({ VUS: String(USERS), GROUPS: '1', GROUP_SIZE: '2100', RATE: '4', DURATION: '6s', SESSION_S: '3' });
      const hugeRuns = await Promise.all([0, 1].map((g) => runK6('group.js', huge, envOf(g), dir, `group-huge-g${g + 1}`)));
      for (const run of hugeRuns) expectCleanGroupRun(run, USERS, 'read');
      for (const run of [...smallRuns, ...hugeRuns]) {
        const acks = [...(run.points.get('seqline_group_send_ack_ms') ?? [])].sort((x, y) => x - y);
        console.log(
          `group.js run: ${acks.length} acks, p50 ${acks[Math.floor(acks.length / 2)]} ms, max ${acks.at(-1)} ms; sent ${count(run, 'ws_msgs_sent')}`,
        );
      }
      const acked = [...smallRuns, ...hugeRuns].reduce((n, run) => n + count(run, 'seqline_group_send_ack_ms'), 0);
      let ownCopies = 0;
      for (let u = 1; u <= USERS; u++) {
        const user = `u${u}`;
        const entries = await httpSyncAll(cluster.gateways[u % 2]!.httpUrl, cluster.tenant, user);
        const mine = entries.filter((e) => e.kind === 'msg' && e.conv.type === 'group' && e.from === user);
        expect(new Set(mine.map((e) => e.appinfo)).size).toBe(mine.length);
        ownCopies += mine.length;
      }
      console.log(`group.js through 2 gateways: ${acked} group sends acknowledged, ${ownCopies} sender copies stored`);
      expect(ownCopies).toBeGreaterThanOrEqual(acked);
    }, 180_000);

    it('sync.js pages through the inboxes through gateway 2, no failed request', async () => {
      const run = await runK6('sync.js', vars({ VUS: '4', DURATION: '2s' }), envOf(1), dir);
      expectCleanSyncRun(run);
    }, 60_000);
  });
}
