/**
 * `@seqline/testing/build`: the workspace build (`tsc -b tsconfig.build.json`), for the few tests
 * that run built JS. Test files run in parallel processes: a lock directory serialises the
 * builds, so no test starts `node dist/…` while another process is rewriting dist/.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LOCK = join(REPO_ROOT, 'node_modules', '.cache', 'seqline-build.lock');
const POLL_MS = 200;

/** Builds every package's dist/ (incremental: a no-op when up to date). Rejects past `timeoutMs`. */
export async function buildWorkspace(timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await acquireLock(deadline);
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-b', 'tsconfig.build.json'], {
      cwd: REPO_ROOT,
      timeout: Math.max(1, deadline - Date.now()),
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: unknown) => {
      const out = err && typeof err === 'object' && 'stdout' in err ? String(err.stdout) : '';
      throw new Error(`tsc -b tsconfig.build.json failed:\n${out}`, { cause: err });
    });
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

async function acquireLock(deadline: number): Promise<void> {
  await mkdir(join(LOCK, '..'), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      await writeFile(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (await holderIsGone()) {
      await rm(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`build lock ${LOCK} still held after the timeout`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** A lock left by a killed test process (its pid no longer runs) is taken over. */
async function holderIsGone(): Promise<boolean> {
  const pid = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 0) return false; // being created right now: wait
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
