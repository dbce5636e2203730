/**
 * `schema migrate|status` against a real CQL cluster (scripts/services.sh up), with no Seqline
 * server running: the command talks to the cluster directly. Skipped without a cluster unless
 * REQUIRE_SERVICES=1.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'cassandra-driver';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@seqline/testing';
import { runCli } from './cli-harness.ts';

const CONTACT_POINTS = process.env.SCYLLA_CONTACT_POINTS ?? '127.0.0.1:9042';
const LOCAL_DC = process.env.SCYLLA_LOCAL_DC ?? 'datacenter1';

function client(): Client {
  return new Client({ contactPoints: CONTACT_POINTS.split(','), localDataCenter: LOCAL_DC, socketOptions: { connectTimeout: 2_000 } });
}

async function clusterAnswers(): Promise<string | null> {
  const c = client();
  try {
    await c.connect();
    return null;
  } catch (err) {
    return err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
  } finally {
    await c.shutdown().catch(() => undefined);
  }
}

describe('schema migrate: unreachable cluster', () => {
  it('exits 3 with the contact points in the message', async () => {
    const port = await freePort();
    const r = await runCli(['schema', 'migrate', '--contact-points', `127.0.0.1:${port}`, '--keyspace', 'nowhere']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`cannot reach the CQL cluster at 127.0.0.1:${port}`);
  });

  it('a bad --replication is a usage error', async () => {
    const r = await runCli(['schema', 'migrate', '--replication', 'three']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--replication: "three"/);
  });
});

const unavailable = await clusterAnswers();
const required = process.env.REQUIRE_SERVICES === '1';

describe.skipIf(unavailable !== null && !required)(`schema migrate on ${CONTACT_POINTS}`, () => {
  const keyspace = `seqline_admin_${randomBytes(4).toString('hex')}`;
  const env = { SCYLLA_CONTACT_POINTS: CONTACT_POINTS, SCYLLA_LOCAL_DC: LOCAL_DC, SCYLLA_KEYSPACE: keyspace };
  afterAll(async () => {
    const c = client();
    try {
      await c.connect();
      await c.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    } finally {
      await c.shutdown().catch(() => undefined);
    }
  });

  it('applies every migration once, then finds nothing to do; status agrees', async () => {
    if (unavailable !== null) throw new Error(`REQUIRE_SERVICES=1 but no CQL cluster: ${unavailable}`);
    const first = await runCli(['schema', 'migrate', '--json'], env);
    expect(first.stderr).toBe(''); // no progress bar: stderr is not a terminal here
    expect(first.code).toBe(0);
    const applied = JSON.parse(first.stdout) as { keyspace: string; applied: string[]; skipped: string[] };
    expect(applied.keyspace).toBe(keyspace);
    expect(applied.applied.length).toBeGreaterThan(0);
    expect(applied.skipped).toEqual([]);

    const again = await runCli(['schema', 'migrate'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/applied\s+none \(schema is up to date\)/);

    const status = await runCli(['schema', 'status', '--json'], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ keyspace, pending: [] });
  }, 180_000);
});
