/**
 * Operator settings (tier thresholds, limits) on CQL: one row of the LWT-only `settings` table,
 * `((name)) → version, value (JSON), op`. A save is `IF NOT EXISTS` (version 0) or
 * `IF version = ?`, so two savers from the same version cannot both win, from any process.
 */
import { KeyedQueue, InternalError, type Settings, type SettingsSave, type SettingsStore } from '@seqline/core';
import { isUnknownOutcome, newOp, optNum, sameOp, str, type Cql } from './cql.ts';

export const DEFAULT_SETTINGS_NAME = 'current';

type Values = Omit<Settings, 'version'>;

export class CqlSettingsStore implements SettingsStore {
  private readonly serial = new KeyedQueue();
  private readonly q: Record<'read' | 'insert' | 'update', string>;

  constructor(
    private readonly cql: Cql,
    private readonly name = DEFAULT_SETTINGS_NAME,
  ) {
    const settings = cql.table('settings');
    this.q = {
      read: `SELECT version, value, op FROM ${settings} WHERE name = ?`,
      insert: `INSERT INTO ${settings} (name, version, value, op) VALUES (?, ?, ?, ?) IF NOT EXISTS`,
      update: `UPDATE ${settings} SET version = ?, value = ?, op = ? WHERE name = ? IF version = ?`,
    };
  }

  /** A plain read: cheap for watchers; a save with a stale version is refused anyway. */
  async load(): Promise<Settings | null> {
    const row = (await this.cql.read(this.q.read, [this.name])).first();
    const version = optNum(row?.get('version'));
    if (row === null || version === undefined) return null;
    const value = JSON.parse(str(row.get('value'), 'value')) as Partial<Values>;
    return { ...(value as Values), hooks: value.hooks ?? {}, version };
  }

  /** Saves of one process are sent one at a time (no Paxos contention with itself). */
  save({ settings, expectedVersion }: SettingsSave): Promise<Settings | false> {
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
      return Promise.reject(new InternalError(`invalid expected settings version ${String(expectedVersion)}`));
    }
    const value = JSON.stringify({ tiers: settings.tiers, limits: settings.limits, hooks: settings.hooks });
    const version = expectedVersion + 1;
    const saved = (): Settings => ({ ...(JSON.parse(value) as Values), version });
    return this.serial.run(this.name, async () => {
      const op = newOp();
      try {
        const result =
          expectedVersion === 0
            ? await this.cql.lwt(this.q.insert, [this.name, version, value, op])
            : await this.cql.lwt(this.q.update, [version, value, op, this.name, expectedVersion]);
        return result.wasApplied() ? saved() : false;
      } catch (err) {
        if (!isUnknownOutcome(err)) throw err;
        const row = (await this.cql.serialRead(this.q.read, [this.name])).first();
        return sameOp(row?.get('op'), op) ? saved() : false;
      }
    });
  }
}
