/**
 * The randomized fault campaign, short (docs/faults.md, "The randomized campaign"): a few small
 * rounds through `scripts/campaign.sh`, so the harness — driver, nemesis, checker — cannot rot.
 * Each round's history is judged by the independent checker; every round must be clean.
 *
 * - embedded: kill -9 and restarts (also inside conversation rebuilds and group fanouts), clock
 *   jumps, and a 30-minute outage (simulated clock) right after a group send was acknowledged;
 * - distributed, process faults only (this run's own workers and gateways): kill -9, SIGSTOP of
 *   a shard owner past its lease, rolling restarts, clock jumps, the 30-minute outage;
 * - distributed with service faults (Redis FLUSHALL / restart / rollback, NATS restart and
 *   JetStream rollback, Cassandra restart): only with SEQLINE_CAMPAIGN_SERVICE_FAULTS=1, since
 *   they stop the services every other suite uses.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeAll, REPO_ROOT, requireServices } from './support/services.ts';

const probe = await probeAll();

interface Row {
  mode: string;
  seed: string;
  error?: string;
  result?: { acked: number; injected: Record<string, number> };
  report?: { anomalies: { kind: string; where: string; detail: string }[]; inconclusive: number; partitions: number; linearizable: number };
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Runs the campaign; resolves with its rows and output (it exits 1 on any anomaly: the rows say which). */
async function campaign(args: string[], env: Record<string, string> = {}): Promise<{ rows: Row[]; output: string }> {
  const out = await mkdtemp(join(tmpdir(), 'seqline-campaign-test-'));
  dirs.push(out);
  const json = join(out, 'rows.json');
  const output = await new Promise<string>((resolve) => {
    execFile(
      'bash',
      ['scripts/campaign.sh', '--out', out, '--json', json, '--keep-all', ...args],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 1_500_000, maxBuffer: 64 * 1024 * 1024 },
      (_err, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
    );
  });
  const rows = JSON.parse(await readFile(json, 'utf8').catch(() => '[]')) as Row[];
  return { rows, output };
}

function expectClean(rows: Row[], output: string, rounds: number): void {
  if (rows.length !== rounds || rows.some((r) => r.error || !r.report || r.report.anomalies.length > 0)) console.log(output.slice(-20_000));
  expect(rows).toHaveLength(rounds);
  for (const r of rows) {
    expect(r.error).toBeUndefined();
    expect(r.report?.anomalies.slice(0, 10)).toEqual([]);
    expect(r.report?.inconclusive).toBe(0);
    expect(r.report?.linearizable).toBe(r.report?.partitions);
    expect(r.result?.acked).toBeGreaterThan(0);
  }
  expect(rows.reduce((n, r) => n + Object.values(r.result?.injected ?? {}).reduce((a, b) => a + b, 0), 0)).toBeGreaterThan(0);
}

describe('fault campaign (short)', () => {
  it('embedded: 2 rounds of 300 messages, kill -9 anywhere and a 30-minute outage, 0 anomalies', async () => {
    // No injected hook failures here: after the outage, one failed attempt dead-letters a job
    // accepted before it (docs/faults.md, "Found so far"); the full campaign reports that.
    // Dropping `--hook-fail-rate 0` is the test of its fix.
    const args = '--mode embedded --rounds 2 --messages 300 --outage-chance 1 --seed ci --hook-fail-rate 0';
    const { rows, output } = await campaign(args.split(' '));
    expectClean(rows, output, 2);
    // Accepted sends survive a 30-minute outage: it happened, and nothing was lost (the checker's I4).
    expect(rows.reduce((n, r) => n + (r.result?.injected.outage30 ?? 0), 0)).toBeGreaterThan(0);
  }, 1_500_000);

  it.skipIf(!requireServices(probe, 'the distributed campaign'))(
    'distributed, process faults: 1 round of 300 messages, 0 anomalies',
    async () => {
      const { rows, output } = await campaign('--mode distributed --rounds 1 --messages 300 --outage-chance 1 --seed ci'.split(' '), {
        SEQLINE_E2E_KEYSPACE: process.env.SEQLINE_E2E_KEYSPACE ?? 'seqline_campaign',
      });
      expectClean(rows, output, 1);
    },
    1_500_000,
  );

  it.skipIf(process.env.SEQLINE_CAMPAIGN_SERVICE_FAULTS !== '1' || !requireServices(probe, 'the distributed campaign'))(
    'distributed, service faults too: 1 round of 300 messages, 0 anomalies',
    async () => {
      const { rows, output } = await campaign(
        ['--mode', 'distributed', '--rounds', '1', '--messages', '300', '--service-faults', '--seed', 'ci-services'],
        {
          SEQLINE_E2E_KEYSPACE: process.env.SEQLINE_E2E_KEYSPACE ?? 'seqline_campaign',
        },
      );
      expectClean(rows, output, 1);
    },
    1_500_000,
  );
});
