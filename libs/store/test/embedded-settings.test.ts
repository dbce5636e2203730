/** SettingsStore contract against the embedded LMDB engine, plus a check across processes. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, DEFAULT_TIER_THRESHOLDS } from '@seqline/core';
import { settingsStoreContract } from '@seqline/testing';
import { openEmbeddedEngine } from '@seqline/store';

const root = mkdtempSync(join(tmpdir(), 'seqline-settings-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

settingsStoreContract('embedded LMDB', async (dataKey) => {
  const engine = await openEmbeddedEngine({ dir: join(root, dataKey) });
  return { store: engine.settings, close: () => engine.close() };
});

describe('embedded settings across processes', () => {
  it('a save by another process is seen by load, and its CAS respects ours', async () => {
    const dir = join(root, 'two-processes');
    const engine = await openEmbeddedEngine({ dir });
    try {
      const base = { tiers: { ...DEFAULT_TIER_THRESHOLDS }, limits: { ...DEFAULT_LIMITS }, hooks: {} };
      expect(await engine.settings.save({ settings: base, expectedVersion: 0 })).not.toBe(false);
      // The child saves version 2 with largeGroupConcurrency 2 through its own environment.
      const script = `
        import { openEmbeddedEngine } from '@seqline/store';
        const engine = await openEmbeddedEngine({ dir: ${JSON.stringify(dir)} });
        const current = await engine.settings.load();
        const saved = await engine.settings.save({ settings: { tiers: current.tiers, limits: { ...current.limits, largeGroupConcurrency: 2 }, hooks: current.hooks }, expectedVersion: current.version });
        await engine.close();
        process.stdout.write(JSON.stringify(saved));
      `;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: process.cwd() },
      );
      expect(JSON.parse(stdout)).toMatchObject({ version: 2, limits: { largeGroupConcurrency: 2 } });
      expect(await engine.settings.load()).toMatchObject({ version: 2, limits: { largeGroupConcurrency: 2 } });
      // Our view was version 1: a save from it must lose.
      expect(await engine.settings.save({ settings: base, expectedVersion: 1 })).toBe(false);
    } finally {
      await engine.close();
    }
  });
});
