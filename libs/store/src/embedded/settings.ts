/**
 * Operator settings (tier thresholds and limits) on LMDB: one record under one key. A save is
 * a compare-and-set on `version` inside one write transaction; LMDB's write lock serializes
 * transactions across threads and processes, so two savers can never both see the same
 * version and both win.
 */
import type { Database } from 'lmdb';
import {
  InternalError,
  type Limits,
  type Settings,
  type SettingsSave,
  type SettingsStore,
  type TenantHooks,
  type TierThresholds,
} from '@seqline/core';
import type { WriteBatcher } from './write-batcher.ts';

/** Sub-database of the engine's environment holding the record. */
export const SETTINGS_DB_NAME = 'settings';
const SETTINGS_KEY = 'current';

export class LmdbSettingsStore implements SettingsStore {
  constructor(
    private readonly db: Database<Settings, string>,
    private readonly writes: WriteBatcher,
  ) {}

  async load(): Promise<Settings | null> {
    const stored = this.db.get(SETTINGS_KEY);
    return stored === undefined ? null : copy(stored, stored.version);
  }

  async save({ settings, expectedVersion }: SettingsSave): Promise<Settings | false> {
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
      throw new InternalError(`invalid expected settings version ${String(expectedVersion)}`);
    }
    const next = copy(settings, expectedVersion + 1);
    return this.writes.run(() => {
      // Read inside the write transaction: this is the version every other writer sees too.
      const storedVersion = this.db.get(SETTINGS_KEY)?.version ?? 0;
      if (storedVersion !== expectedVersion) return false;
      this.db.put(SETTINGS_KEY, next);
      return copy(next, next.version);
    });
  }
}

/** A detached copy: callers may not alias what the store holds (or what it will write). */
function copy(settings: { tiers: TierThresholds; limits: Limits; hooks?: Record<string, TenantHooks> }, version: number): Settings {
  const hooks = Object.fromEntries(Object.entries(settings.hooks ?? {}).map(([tenant, h]) => [tenant, { ...h }]));
  return { tiers: { ...settings.tiers }, limits: { ...settings.limits }, hooks, version };
}
