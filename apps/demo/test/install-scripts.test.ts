/**
 * `npm install`, the README's first command, on npm 11: every dependency with an install script
 * is listed in package.json's `allowScripts` (so the install prints no "not yet covered by
 * allowScripts" warning), no entry is stale, and an install that refuses unreviewed scripts
 * (`--strict-allow-scripts`) goes through. The install runs as a dry run on a scratch copy of
 * the manifests and the lockfile: it reads no network and never touches the repo's node_modules.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRepoFile, REPO_ROOT } from './support/readme.ts';
import { userEnv } from './support/shell.ts';

interface LockPackage {
  version?: string;
  hasInstallScript?: boolean;
  link?: boolean;
}

const manifest = JSON.parse(readRepoFile('package.json')) as { allowScripts?: Record<string, boolean>; workspaces: string[] };
const lock = JSON.parse(readRepoFile('package-lock.json')) as { packages: Record<string, LockPackage> };

/** Names of the locked registry packages that have an install script. */
const withInstallScripts = [
  ...new Set(
    Object.entries(lock.packages)
      .filter(([path, pkg]) => path.includes('node_modules/') && pkg.hasInstallScript === true && pkg.link !== true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
  ),
].sort();

describe('allowScripts in package.json', () => {
  it('lists every locked package with an install script, by name, and nothing else', () => {
    expect(withInstallScripts.length).toBeGreaterThan(0);
    const entries = manifest.allowScripts ?? {};
    // By name: the lockfile carries no `resolved` URLs, and npm cannot match a pinned `pkg@1.2.3` without one.
    expect(Object.keys(entries).sort()).toEqual(withInstallScripts);
    expect(Object.values(entries).every((allowed) => allowed)).toBe(true);
  });
});

const npmVersion = spawnSync('npm', ['--version'], { env: userEnv(), encoding: 'utf8' }).stdout.trim();
const npmMajor = Number(npmVersion.split('.')[0]);
const strictMissing = npmMajor >= 11 ? null : `npm ${npmVersion || '(none)'} has no --strict-allow-scripts (npm 11 does)`;
if (strictMissing !== null && process.env.CI !== 'true') console.log(`[seqline tests] strict install check skipped: ${strictMissing}`);

describe.skipIf(strictMissing !== null && process.env.CI !== 'true')('npm install --strict-allow-scripts (a dry run on a copy)', () => {
  const scratch: string[] = [];
  afterAll(async () => {
    for (const dir of scratch) await rm(dir, { recursive: true, force: true });
  });

  /** package.json (optionally changed), the lockfile and every workspace's package.json, in a new folder. */
  async function copyManifests(change?: (m: Record<string, unknown>) => void): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'seqline-install-'));
    scratch.push(dir);
    const root = JSON.parse(readRepoFile('package.json')) as Record<string, unknown>;
    change?.(root);
    await writeFile(join(dir, 'package.json'), JSON.stringify(root, null, 2));
    await cp(join(REPO_ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    for (const pattern of manifest.workspaces) {
      const parent = pattern.replace(/\/\*$/, '');
      for (const name of await readdir(join(REPO_ROOT, parent))) {
        const source = join(REPO_ROOT, parent, name, 'package.json');
        if (!existsSync(source)) continue; // a folder without a package is no workspace
        await mkdir(join(dir, parent, name), { recursive: true });
        await cp(source, join(dir, parent, name, 'package.json'));
      }
    }
    return dir;
  }

  const install = (dir: string) =>
    spawnSync(
      'npm',
      [
        'install',
        '--dry-run',
        '--strict-allow-scripts',
        '--ignore-scripts=false',
        '--offline',
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
      ],
      { cwd: dir, env: { ...userEnv(), npm_config_cache: join(dir, '.npm-cache') }, encoding: 'utf8', timeout: 120_000 },
    );

  it('goes through with the reviewed list (the control below shows an uncovered script would stop it)', async () => {
    if (strictMissing !== null) throw new Error(strictMissing);
    const run = install(await copyManifests());
    expect(run.status, run.stderr).toBe(0);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/install-scripts|not yet covered|ESTRICTALLOWSCRIPTS/);
  }, 150_000);

  it('control: without allowScripts the same install is refused, naming the packages', async () => {
    const run = install(
      await copyManifests((m) => {
        delete m['allowScripts'];
      }),
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('ESTRICTALLOWSCRIPTS');
    for (const name of withInstallScripts) expect(run.stderr).toContain(name);
  }, 150_000);
});
