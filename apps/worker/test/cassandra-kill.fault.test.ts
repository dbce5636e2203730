/**
 * What the fault campaign's Cassandra restarts stand on (docs/faults.md, "Cassandra restarts"):
 * a private node started as the campaign starts it (scripts/services.sh with SERVICES_STATE_DIR,
 * ports of its own, CASSANDRA_COMMITLOG_SYNC=batch) keeps every write it acknowledged across a
 * `kill -9` of its JVM. With the default periodic sync it does not: it acknowledges before the
 * commitlog is synced, and a kill loses the last seconds of acknowledged writes (16 and 32 of
 * 3 000 here) — which Seqline, trusting an acknowledged write, turned into lost entries and
 * drifted unread counts. Never the shared node: services.sh refuses its ports for a private one.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@seqline/testing';
import { Client, types } from 'cassandra-driver';
import { afterAll, describe, expect, it } from 'vitest';
import { probeCassandra, REPO_ROOT, requireServices } from './support/services.ts';

const run = promisify(execFile);
const WRITES = 3_000;
const IN_FLIGHT = 16;

// The shared node answering means the install (jars, java) is there for a private one.
if (requireServices(await probeCassandra(), 'a private Cassandra node killed with kill -9')) {
  describe('a private Cassandra node with a synced commitlog (CASSANDRA_COMMITLOG_SYNC=batch)', () => {
    let dir: string | undefined;
    let env: Record<string, string> = {};
    const sh = (cmd: 'start' | 'stop') =>
      run('bash', ['scripts/services.sh', cmd, 'cassandra'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 240_000 });

    afterAll(async () => {
      if (!dir) return;
      await sh('stop').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }, 300_000);

    it('loses no acknowledged write to a kill -9 of its JVM', async () => {
      dir = await mkdtemp(join(tmpdir(), 'seqline-cassandra-kill-'));
      const port = await freePort();
      env = {
        SERVICES_STATE_DIR: dir,
        CASSANDRA_PORT: String(port),
        CASSANDRA_STORAGE_PORT: String(await freePort()),
        CASSANDRA_JMX_PORT: String(await freePort()),
        CASSANDRA_COMMITLOG_SYNC: 'batch',
      };
      await sh('start');
      const write = new Client({ contactPoints: [`127.0.0.1:${port}`], localDataCenter: 'datacenter1' });
      let acked = 0;
      try {
        await write.connect();
        await write.execute("CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        await write.execute('CREATE TABLE k.acked (p int, s int, v text, PRIMARY KEY (p, s))');
        const insert = 'INSERT INTO k.acked (p, s, v) VALUES (0, ?, ?)';
        const options = { prepare: true, consistency: types.consistencies.localQuorum };
        let next = 0;
        await Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            for (let s = next++; s < WRITES; s = next++) {
              await write.execute(insert, [s, 'x'.repeat(100)], options);
              acked++;
            }
          }),
        );
        // At once, by its pid: every write above was acknowledged, none is in flight.
        process.kill(Number((await readFile(join(dir, 'cassandra/cassandra.pid'), 'utf8')).trim()), 'SIGKILL');
      } finally {
        await write.shutdown().catch(() => undefined);
      }
      expect(acked).toBe(WRITES);

      await sh('start'); // commitlog replay, then CQL answers
      const read = new Client({ contactPoints: [`127.0.0.1:${port}`], localDataCenter: 'datacenter1' });
      try {
        await read.connect();
        const rows = await read.execute('SELECT count(*) AS n FROM k.acked WHERE p = 0', [], {
          consistency: types.consistencies.localQuorum,
        });
        expect(Number(rows.first().get('n'))).toBe(WRITES);
      } finally {
        await read.shutdown().catch(() => undefined);
      }
    }, 600_000);
  });
}
