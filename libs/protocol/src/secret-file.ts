import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The token secret when SEQLINE_SECRET is unset: created on first use and kept (mode 0600) in
 * the data dir, so the server and `seqline-admin token issue` agree without configuration.
 */
export async function loadOrCreateSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'secret');
  const existing = await readSecret(file);
  if (existing !== null) return existing;
  await mkdir(dataDir, { recursive: true });
  // Written whole under a temporary name, then linked into place: link() fails when the file
  // exists, so processes starting at once all end up with the winner's secret, and nobody can
  // read a half-written file (as with open('wx') followed by a write).
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temp).catch(() => {});
  }
  const secret = await readSecret(file);
  if (secret === null) throw new Error(`could not create the token secret at ${file}`);
  return secret;
}

async function readSecret(file: string): Promise<string | null> {
  try {
    const secret = (await readFile(file, 'utf8')).trim();
    if (secret === '') throw new Error(`token secret file ${file} is empty; delete it or set SEQLINE_SECRET`);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
