/** LiveSettings over the real embedded SettingsStore: updates, watching, bad records, contention. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BadRequestError, DEFAULT_LIMITS, DEFAULT_TIER_THRESHOLDS, silentLogger, type Settings, type SettingsStore } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { LiveSettings } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-live-settings-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close();
});

let dirs = 0;
async function engine(): Promise<EmbeddedEngine> {
  const e = await openEmbeddedEngine({ dir: join(root, `db${++dirs}`) });
  opened.push(e);
  return e;
}

async function live(store: SettingsStore, pollMs = 50): Promise<LiveSettings> {
  const l = await LiveSettings.start({ store, logger: silentLogger, pollMs });
  opened.push(l);
  return l;
}

async function within<T>(ms: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('LiveSettings', () => {
  it('starts on the defaults at version 0 when nothing is stored', async () => {
    const l = await live((await engine()).settings);
    expect(l.current()).toEqual({ tiers: DEFAULT_TIER_THRESHOLDS, limits: DEFAULT_LIMITS, hooks: {}, version: 0 });
  });

  it('update validates, saves with the next version and applies here at once', async () => {
    const e = await engine();
    const l = await live(e.settings, 60_000);
    const saved = await l.update({ limits: { largeGroupConcurrency: 2 }, tiers: { maxMembers: 100_000 } });
    expect(saved.version).toBe(1);
    expect(l.limits().largeGroupConcurrency).toBe(2);
    expect(l.tiers().maxMembers).toBe(100_000);
    expect(await e.settings.load()).toEqual(saved);
  });

  it('the settings handed out are frozen: a reader cannot change them for everyone', async () => {
    const l = await live((await engine()).settings);
    expect(() => {
      (l.limits() as { smallPool: number }).smallPool = 1;
    }).toThrow(TypeError);
    await l.update({ limits: { smallPool: 3 } });
    expect(Object.isFrozen(l.tiers())).toBe(true);
    expect(() => {
      (l.limits() as { smallPool: number }).smallPool = 1;
    }).toThrow(TypeError);
    expect(l.limits().smallPool).toBe(3);
  });

  it('an invalid patch is a BadRequestError and stores nothing', async () => {
    const e = await engine();
    const l = await live(e.settings);
    await expect(l.update({ tiers: { smallBelow: 5000 } })).rejects.toBeInstanceOf(BadRequestError);
    await expect(l.update({ limits: { hugePool: 0 } })).rejects.toThrow(/hugePool must be a positive integer/);
    await expect(l.update({ limits: { perUserInFlight: 10_000 } })).rejects.toThrow(/perUserInFlight/);
    await expect(l.update({ tiers: { hysteresis: 1 } })).rejects.toThrow(/hysteresis/);
    expect(await e.settings.load()).toBeNull();
    expect(l.current().version).toBe(0);
  });

  it('undefined fields in a patch leave stored values alone', async () => {
    const l = await live((await engine()).settings);
    await l.update({ limits: { smallPool: 30 } });
    const saved = await l.update({ limits: { smallPool: undefined, largePool: 9 } });
    expect(saved.limits).toMatchObject({ smallPool: 30, largePool: 9 });
  });

  it('another instance picks up a change within 2 s, and onChange sees next and previous', async () => {
    const e = await engine();
    const writer = await live(e.settings);
    const watcher = await live(e.settings, 200);
    const seen: Array<[Settings, Settings]> = [];
    watcher.onChange((next, previous) => seen.push([next, previous]));
    const started = Date.now();
    await writer.update({ limits: { largeGroupConcurrency: 2 } });
    await within(2000, () => (watcher.limits().largeGroupConcurrency === 2 ? true : undefined));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.[0].version).toBe(1);
    expect(seen[0]?.[1].limits.largeGroupConcurrency).toBe(DEFAULT_LIMITS.largeGroupConcurrency);
  });

  it('a change saved by another process is picked up within 2 s', async () => {
    const dir = join(root, 'cross-process');
    const e = await openEmbeddedEngine({ dir });
    opened.push(e);
    const watcher = await live(e.settings, 100);
    const script = `
      import { openEmbeddedEngine } from '@seqline/store';
      import { LiveSettings } from '@seqline/messaging';
      import { silentLogger } from '@seqline/core';
      const engine = await openEmbeddedEngine({ dir: ${JSON.stringify(dir)} });
      const live = await LiveSettings.start({ store: engine.settings, logger: silentLogger });
      await live.update({ limits: { largeGroupConcurrency: 3 }, tiers: { largeBelow: 1500 } });
      await live.close();
      await engine.close();
    `;
    await promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: process.cwd(),
    });
    const started = Date.now();
    await within(2000, () => (watcher.current().version === 1 ? true : undefined));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(watcher.limits().largeGroupConcurrency).toBe(3);
    expect(watcher.tiers().largeBelow).toBe(1500);
  });

  it('concurrent updates from two instances lose nothing and apply in call order per instance', async () => {
    const e = await engine();
    const a = await live(e.settings);
    const b = await live(e.settings);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => [
        a.update({ limits: { largeGroupConcurrency: i + 1 } }),
        b.update({ limits: { hugePool: i + 1 } }),
        b.update({ tiers: { smallBelow: 50 + i } }),
      ]).flat(),
    );
    const stored = await e.settings.load();
    expect(stored?.version).toBe(30);
    // The last write of each field wins; a stale read-modify-write would have reset one of them.
    expect(stored?.limits.largeGroupConcurrency).toBe(10);
    expect(stored?.limits.hugePool).toBe(10);
    expect(stored?.tiers.smallBelow).toBe(59);
  });

  it('an update racing a direct save of the same version retries on the newer record', async () => {
    const e = await engine();
    let raced = false;
    const racing: SettingsStore = {
      load: () => e.settings.load(),
      async save(input) {
        if (!raced) {
          raced = true; // someone else saves first, from the same version
          await e.settings.save({
            settings: { tiers: DEFAULT_TIER_THRESHOLDS, limits: { ...DEFAULT_LIMITS, smallPool: 7 }, hooks: {} },
            expectedVersion: input.expectedVersion,
          });
        }
        return e.settings.save(input);
      },
    };
    const l = await live(racing);
    const saved = await l.update({ limits: { largePool: 3 } });
    expect(saved).toMatchObject({ version: 2, limits: { smallPool: 7, largePool: 3 } });
  });

  it('gives up with OVERLOADED when every compare-and-set loses', async () => {
    const e = await engine();
    let saves = 0;
    const alwaysStale: SettingsStore = {
      load: () => e.settings.load(),
      save: async () => {
        saves += 1;
        return false;
      },
    };
    const l = await LiveSettings.start({ store: alwaysStale, logger: silentLogger, maxUpdateAttempts: 3 });
    opened.push(l);
    await expect(l.update({ limits: { smallPool: 3 } })).rejects.toMatchObject({ code: 'OVERLOADED' });
    expect(saves).toBe(3);
    // The failed update does not block the next one.
    await expect(l.update({ limits: { smallPool: 4 } })).rejects.toMatchObject({ code: 'OVERLOADED' });
    expect(saves).toBe(6);
  });

  it('an invalid stored record is not applied; a valid update replaces it', async () => {
    const e = await engine();
    const l = await live(e.settings, 30);
    await l.update({ limits: { smallPool: 20 } });
    // Written around validation (as a buggy or newer process might).
    await e.settings.save({
      settings: { tiers: { ...DEFAULT_TIER_THRESHOLDS, smallBelow: 9000 }, limits: { ...DEFAULT_LIMITS }, hooks: {} },
      expectedVersion: 1,
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(l.current().version).toBe(1);
    expect(l.tiers().smallBelow).toBe(DEFAULT_TIER_THRESHOLDS.smallBelow);
    const fixed = await l.update({ tiers: { smallBelow: 80 } });
    expect(fixed.version).toBe(3);
    expect(fixed.tiers.smallBelow).toBe(80);
  });

  it('a record saved by an older version (missing fields) gets defaults for them', async () => {
    const e = await engine();
    const { perTenantInFlight: _dropped, ...older } = { ...DEFAULT_LIMITS, smallPool: 3 };
    await e.settings.save({
      settings: { tiers: DEFAULT_TIER_THRESHOLDS, limits: older as typeof DEFAULT_LIMITS, hooks: {} },
      expectedVersion: 0,
    });
    const l = await live(e.settings);
    expect(l.limits()).toEqual({ ...DEFAULT_LIMITS, smallPool: 3 });
    expect(l.current().version).toBe(1);
  });

  it('a failing store read keeps the current settings and watching resumes after it', async () => {
    const e = await engine();
    let failing = false;
    const flaky: SettingsStore = {
      load: () => (failing ? Promise.reject(new Error('store down')) : e.settings.load()),
      save: (input) => e.settings.save(input),
    };
    const l = await live(flaky, 20);
    failing = true;
    await e.settings.save({
      settings: { tiers: DEFAULT_TIER_THRESHOLDS, limits: { ...DEFAULT_LIMITS, smallPool: 5 }, hooks: {} },
      expectedVersion: 0,
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(l.limits().smallPool).toBe(DEFAULT_LIMITS.smallPool);
    failing = false;
    await within(2000, () => (l.limits().smallPool === 5 ? true : undefined));
  });

  it('after close no more changes are picked up', async () => {
    const e = await engine();
    const l = await live(e.settings, 20);
    await l.close();
    await e.settings.save({
      settings: { tiers: DEFAULT_TIER_THRESHOLDS, limits: { ...DEFAULT_LIMITS, smallPool: 5 }, hooks: {} },
      expectedVersion: 0,
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(l.current().version).toBe(0);
  });
});

describe('hooksOf', () => {
  it('resolves a tenant once per settings version, and sees a change made anywhere', async () => {
    const e = await engine();
    const [here, elsewhere] = [await live(e.settings), await live(e.settings)];
    const hooksOf = here.hooksOf({ notifyWindowMs: 500, loginPolicy: 'one' });
    const first = hooksOf('acme');
    expect(first).toMatchObject({ notifyWindowMs: 500, loginPolicy: 'one', notifyUrl: undefined });
    expect(hooksOf('acme')).toBe(first); // no work per call while nothing changed
    await elsewhere.update({ hooks: { tenant: 'acme', patch: { loginPolicy: 'all', notifyUrl: 'https://push.example.com/n' } } });
    const next = await within(2000, () => (hooksOf('acme').loginPolicy === 'all' ? hooksOf('acme') : undefined));
    expect(next).toMatchObject({ notifyWindowMs: 500, notifyUrl: 'https://push.example.com/n' });
    expect(hooksOf('other')).toMatchObject({ loginPolicy: 'one' });
  });
});
