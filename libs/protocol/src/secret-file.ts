import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The token secret when SEQLINE_SECRET is unset: created on first use and kept (mode 0600) in
 * the data dir, so the server and `seqline-admin token issue` agree without configuration.
 */
export async function loadOrCreateSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'secret');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  // 'wx': two processes starting at once both end up reading the one that won.
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw e;
  });
  return (await readFile(file, 'utf8')).trim();
}
