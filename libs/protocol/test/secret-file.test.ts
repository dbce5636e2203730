import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTokenVerifier, issueToken, loadOrCreateSecret } from '@seqline/protocol';

describe('loadOrCreateSecret', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'seqline-secret-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a private secret once and returns the same one afterwards', async () => {
    const first = await loadOrCreateSecret(join(dir, 'data'));
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect((await stat(join(dir, 'data', 'secret'))).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateSecret(join(dir, 'data'))).toBe(first);
    // Usable as a token secret.
    const token = await issueToken({ secret: first, user: 'alice', ttlSeconds: 60 });
    expect(createTokenVerifier(first)(token)).toMatchObject({ user: 'alice' });
  });

  it('processes starting at once agree on one secret', async () => {
    const secrets = await Promise.all(Array.from({ length: 10 }, () => loadOrCreateSecret(dir)));
    expect(new Set(secrets).size).toBe(1);
    expect((await readFile(join(dir, 'secret'), 'utf8')).trim()).toBe(secrets[0]);
  });

  it('leaves no temporary files behind and refuses an empty secret file', async () => {
    await Promise.all(Array.from({ length: 5 }, () => loadOrCreateSecret(dir)));
    expect(await readdir(dir)).toEqual(['secret']);
    await writeFile(join(dir, 'secret'), '\n');
    await expect(loadOrCreateSecret(dir)).rejects.toThrow(/empty/);
  });

  it('uses an existing secret file as is (trimmed)', async () => {
    await writeFile(join(dir, 'secret'), 'an-operator-provided-secret\n');
    expect(await loadOrCreateSecret(dir)).toBe('an-operator-provided-secret');
  });
});
