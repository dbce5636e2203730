/**
 * The fault campaign's independent checker (tools/checker, Go + porcupine) catches what it
 * must: built the way the campaign builds it, its own Go tests pass, and the binary accepts a
 * clean hand-made history and rejects each broken one — a lost ack, a duplicate, a seq going
 * back, a skipped entry, a drifted unread count, a missing after-send event — for that reason.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/services.ts';

const run = promisify(execFile);
const CHECKER_DIR = join(REPO_ROOT, 'tools/checker');
const FIXTURES = join(CHECKER_DIR, 'testdata');

interface Report {
  counts: Record<string, number>;
  anomalies: { kind: string; detail: string }[];
  linearizable: number;
  partitions: number;
}

async function check(fixture: string): Promise<{ code: number; report: Report }> {
  try {
    const { stdout } = await run(join(CHECKER_DIR, 'dist/checker'), ['-json', join(FIXTURES, fixture)]);
    return { code: 0, report: JSON.parse(stdout) as Report };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: e.code ?? -1, report: JSON.parse(e.stdout ?? '{}') as Report };
  }
}

describe('the campaign checker', () => {
  let goEnv: NodeJS.ProcessEnv;
  beforeAll(async () => {
    await run('bash', [join(REPO_ROOT, 'scripts/build-checker.sh')], { cwd: REPO_ROOT, timeout: 300_000 });
    goEnv = {
      ...process.env,
      GOMODCACHE: join(REPO_ROOT, '.services/cache/go/mod'),
      GOCACHE: join(REPO_ROOT, '.services/cache/go/build'),
      GOFLAGS: '-modcacherw -buildvcs=false',
      GOTOOLCHAIN: 'local',
      PATH: `${process.env.PATH ?? ''}:/usr/local/go/bin`,
    };
  }, 300_000);

  it('passes its Go tests', async () => {
    const { stdout } = await run('go', ['test', '-count=1', './...'], { cwd: CHECKER_DIR, env: goEnv, timeout: 300_000 });
    expect(stdout).toMatch(/^ok\s/m);
  }, 300_000);

  it('accepts a clean history', async () => {
    const { code, report } = await check('clean.jsonl');
    expect(report.anomalies).toEqual([]);
    expect(code).toBe(0);
    expect(report.linearizable).toBe(report.partitions);
  });

  it.each([
    ['lost-ack.jsonl', 'lost', true],
    ['duplicate.jsonl', 'duplicate', true],
    ['seq-back.jsonl', 'regression', true],
    ['skip.jsonl', 'skip', true],
    ['unread-drift.jsonl', 'conv-drift', false],
    ['after-send-missing.jsonl', 'after-send-missing', false],
  ])('rejects %s (%s)', async (fixture, kind, byModel) => {
    const { code, report } = await check(fixture);
    expect(code).toBe(1);
    expect(report.counts[kind]).toBeGreaterThan(0);
    // I1–I4 breaks are also outside the porcupine model; derived-state breaks are not.
    expect((report.counts.nonlinearizable ?? 0) > 0).toBe(byModel);
  });
});
