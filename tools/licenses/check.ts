/**
 * `npm run licenses`: fails when an installed npm package or a program the CI scripts install
 * has a forbidden (AGPL, SSPL, GPL, BUSL, source-available), unknown or missing license and is
 * not in tools/licenses/allowlist.json with a reason. Prints a one-line summary.
 *
 *   node --import tsx tools/licenses/check.ts [root]     # root: the checkout to inspect (default: this one)
 *
 * LICENSES_REDIS_SERVER: the redis-server binary whose version is checked (default: on PATH).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { findInstalls, type Install } from './installs.ts';
import { forbiddenReason, judge } from './policy.ts';

const ROOT = resolve(process.argv[2] ?? fileURLToPath(new URL('../../', import.meta.url)));
const ALLOWLIST = fileURLToPath(new URL('./allowlist.json', import.meta.url));

const allowlistSchema = z.object({
  npm: z.array(z.object({ name: z.string(), license: z.string(), reason: z.string().min(10) })),
  tools: z.array(
    z.object({
      kind: z.enum(['apt', 'go', 'pip', 'maven', 'npm']),
      name: z.string(),
      version: z.string().optional(),
      versionBelow: z.string().optional(),
      license: z.string(),
      reason: z.string().min(10),
    }),
  ),
});
type Allowlist = z.infer<typeof allowlistSchema>;

const packageSchema = z.object({
  name: z.string(),
  version: z.string(),
  private: z.boolean().optional(),
  license: z.union([z.string(), z.object({ type: z.string() })]).optional(),
  licenses: z.array(z.object({ type: z.string() })).optional(),
});

interface NpmPackage {
  name: string;
  version: string;
  license: string | undefined;
  path: string;
}

/** Every package installed under node_modules (nested ones too); workspace links are ours, skipped. */
function installedPackages(dir: string, out: NpmPackage[] = []): NpmPackage[] {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || !entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    if (entry.name.startsWith('@')) {
      installedPackages(path, out);
      continue;
    }
    const manifest = join(path, 'package.json');
    if (existsSync(manifest)) {
      const pkg = packageSchema.safeParse(JSON.parse(readFileSync(manifest, 'utf8')));
      if (!pkg.success) out.push({ name: entry.name, version: '?', license: undefined, path });
      else {
        const l = pkg.data.license;
        const license = typeof l === 'string' ? l : (l?.type ?? pkg.data.licenses?.map((x) => x.type).join(' OR '));
        out.push({ name: pkg.data.name, version: pkg.data.version, license, path });
      }
    }
    installedPackages(join(path, 'node_modules'), out);
  }
  return out;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The version of an apt package's program on this machine, where we know how to ask it. */
function installedAptVersion(name: string): string | undefined {
  if (name !== 'redis-server') return undefined;
  try {
    return /v=(\d+\.\d+\.\d+)/.exec(
      execFileSync(process.env.LICENSES_REDIS_SERVER ?? 'redis-server', ['--version'], { encoding: 'utf8' }),
    )?.[1];
  } catch {
    return undefined; // not installed here: services.sh would install Debian's, checked in CI after `services.sh up`
  }
}

function checkNpm(allow: Allowlist): { problems: string[]; count: number; allowlisted: number } {
  const problems: string[] = [];
  let allowlisted = 0;
  const packages = installedPackages(join(ROOT, 'node_modules'));
  for (const p of packages) {
    const verdict = p.license ? judge(p.license) : 'unknown';
    if (verdict === 'allowed') continue;
    if (allow.npm.some((a) => a.name === p.name && a.license === (p.license ?? 'NONE'))) {
      allowlisted += 1;
      continue;
    }
    const why =
      verdict === 'forbidden'
        ? ((p.license ?? '').split(/\W+/).map(forbiddenReason).find(Boolean) ?? 'forbidden')
        : p.license
          ? 'unknown license'
          : 'no license field';
    problems.push(`npm ${p.name}@${p.version} (${p.path.slice(ROOT.length + 1)}): "${p.license ?? 'NONE'}": ${why}`);
  }
  return { problems, count: packages.length, allowlisted };
}

function checkTools(allow: Allowlist): { problems: string[]; installs: Install[] } {
  const problems: string[] = [];
  const installs = findInstalls(ROOT);
  for (const i of installs) {
    const entry = allow.tools.find((t) => t.kind === i.kind && t.name === i.name);
    if (!entry) {
      problems.push(
        `${i.where} installs ${i.kind} ${i.name}${i.version ? `@${i.version}` : ''}: not in tools/licenses/allowlist.json (add it with its license and a reason)`,
      );
      continue;
    }
    if (entry.version !== undefined && entry.version !== i.version)
      problems.push(
        `${i.where} installs ${i.name} ${i.version ?? '(unpinned)'}; the allowlist reviewed ${entry.version}: check its license and update the entry`,
      );
    if (entry.versionBelow !== undefined) {
      const v = installedAptVersion(i.name);
      if (v !== undefined && compareVersions(v, entry.versionBelow) >= 0)
        problems.push(`${i.name} ${v} is installed; only versions below ${entry.versionBelow} are ${entry.license} (${entry.reason})`);
    }
  }
  return { problems, installs };
}

const allow = allowlistSchema.parse(JSON.parse(readFileSync(ALLOWLIST, 'utf8')));
const npm = checkNpm(allow);
const tools = checkTools(allow);
const problems = [...npm.problems, ...tools.problems];
for (const p of problems) process.stderr.write(`licenses: ${p}\n`);
const toolList = tools.installs
  .map(
    (i) =>
      `${i.name}${i.version ? `@${i.version}` : ''} (${allow.tools.find((t) => t.kind === i.kind && t.name === i.name)?.license ?? '?'})`,
  )
  .join(', ');
process.stdout.write(
  `licenses: ${problems.length === 0 ? 'ok' : `${problems.length} problem(s)`}: ${npm.count} npm packages (${npm.allowlisted} allowlisted), ${tools.installs.length} installed tools: ${toolList}\n`,
);
process.exitCode = problems.length === 0 ? 0 : 1;
