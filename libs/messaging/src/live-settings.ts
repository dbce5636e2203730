/**
 * LiveSettings: the operator settings a running process uses, kept current by polling the
 * SettingsStore. Any process may save (the admin API of any gateway); every process sees the
 * change within `pollMs` — a watch, not a restart. Polling a version number is cheap on both
 * stores (one LMDB read; one CQL partition read) and needs no change feed.
 */
import {
  applyHooksPatch,
  applyLimitsPatch,
  BadRequestError,
  ID_PATTERN,
  validateHooksPatch,
  validateTenantHooks,
  resolveHooks,
  type HooksOf,
  type ResolvedHooks,
  type TenantHooks,
  DEFAULT_LIMITS,
  DEFAULT_TIER_THRESHOLDS,
  InternalError,
  OverloadedError,
  validateLimits,
  validateThresholds,
  type Limits,
  type Logger,
  type Settings,
  type SettingsStore,
  type TierThresholds,
} from '@seqline/core';

export interface LiveSettingsOptions {
  store: SettingsStore;
  logger: Logger;
  /** How often the store is read for a newer version (default 1000 ms). */
  pollMs?: number;
  /** Compare-and-set attempts of one update before giving up (default 20). */
  maxUpdateAttempts?: number;
}

export interface SettingsPatch {
  tiers?: Partial<TierThresholds>;
  limits?: Partial<Limits>;
  /** One tenant's hooks: validated by core's validateHooksPatch; `null` clears a key. */
  hooks?: { tenant: string; patch: unknown };
}

export type SettingsListener = (next: Settings, previous: Settings) => void;

export class LiveSettings {
  private settings: Settings;
  private readonly listeners = new Set<SettingsListener>();
  private readonly timer: NodeJS.Timeout;
  private polling: Promise<void> | undefined;
  private updates: Promise<unknown> = Promise.resolve();
  /** The last version found invalid, so a bad record is reported once, not every poll. */
  private rejectedVersion = -1;
  private closed = false;

  private constructor(
    private readonly options: LiveSettingsOptions,
    initial: Settings,
    pollMs: number,
  ) {
    this.settings = frozen(initial);
    this.timer = setInterval(() => void this.refresh(), pollMs);
    this.timer.unref(); // never keeps a process alive on its own
  }

  /** Loads the stored settings (defaults when none) and starts watching for changes. */
  static async start(options: LiveSettingsOptions): Promise<LiveSettings> {
    const pollMs = options.pollMs ?? 1000;
    if (!Number.isFinite(pollMs) || pollMs <= 0) throw new InternalError(`pollMs must be positive, got ${pollMs}`);
    const logger = options.logger.child({ component: 'live-settings' });
    const stored = await options.store.load();
    let initial: Settings = {
      tiers: { ...DEFAULT_TIER_THRESHOLDS },
      limits: { ...DEFAULT_LIMITS },
      hooks: {},
      version: stored?.version ?? 0,
    };
    if (stored !== null) {
      try {
        initial = normalise(stored);
      } catch (err) {
        // Start anyway on defaults: refusing to boot over a bad operator record helps nobody.
        logger.error({ err, version: stored.version }, 'stored settings are invalid; using defaults until fixed');
      }
    }
    logger.info({ version: initial.version, tiers: initial.tiers, limits: initial.limits }, 'settings loaded');
    return new LiveSettings({ ...options, logger }, initial, pollMs);
  }

  tiers(): TierThresholds {
    return this.settings.tiers;
  }
  limits(): Limits {
    return this.settings.limits;
  }
  current(): Settings {
    return this.settings;
  }
  /**
   * The live hooks of each tenant: `processDefaults` under the tenant's stored override. Read
   * on every send and append, so each tenant's resolution is kept until the settings change.
   */
  hooksOf(processDefaults: TenantHooks): HooksOf {
    let version = -1;
    const resolved = new Map<string, ResolvedHooks>();
    return (tenant) => {
      if (version !== this.settings.version) {
        resolved.clear();
        version = this.settings.version;
      }
      let hooks = resolved.get(tenant);
      if (hooks === undefined) resolved.set(tenant, (hooks = Object.freeze(resolveHooks(processDefaults, this.tenantHooks(tenant)))));
      return hooks;
    };
  }

  /** One tenant's stored hook override (absent: the process defaults apply). */
  tenantHooks(tenant: string): TenantHooks | undefined {
    return Object.hasOwn(this.settings.hooks, tenant) ? this.settings.hooks[tenant] : undefined;
  }

  /** Called with the new and previous settings after every change this process notices. */
  onChange(listener: SettingsListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Validates the patch against the newest stored settings and saves it with compare-and-set,
   * retrying when another process saved in between. Throws BadRequestError for invalid values.
   * The change applies here at once and everywhere else within pollMs.
   */
  async update(patch: SettingsPatch): Promise<Settings> {
    // One update at a time per instance: callers here never race each other's CAS, and the
    // patches apply in call order. Contention left is between processes, which the retry absorbs.
    const run = this.updates.then(() => this.updateNow(patch));
    this.updates = run.catch(() => {});
    return run;
  }

  private async updateNow(patch: SettingsPatch): Promise<Settings> {
    const attempts = this.options.maxUpdateAttempts ?? 20;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const stored = await this.options.store.load();
      const base = stored === null ? this.defaults(0) : this.baseFor(stored);
      const next = {
        tiers: validateThresholds({ ...base.tiers, ...definedOnly(patch.tiers) }),
        limits: applyLimitsPatch(base.limits, definedOnly(patch.limits)),
        hooks: patchHooks(base.hooks, patch.hooks),
      };
      const saved = await this.options.store.save({ settings: next, expectedVersion: base.version });
      if (saved !== false) {
        // Never log a hook patch's values: it may hold a secret.
        const logged = { tiers: patch.tiers, limits: patch.limits, hooksOf: patch.hooks?.tenant };
        this.options.logger.info({ version: saved.version, patch: logged }, 'settings updated');
        this.apply(saved);
        return saved;
      }
      // Someone else saved in between: back off a little (with jitter) so writers spread out.
      await sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
    }
    throw new OverloadedError(`settings changed concurrently ${attempts} times in a row; try again`);
  }

  /** Reads the store now (the poll does this every pollMs); resolves when done. */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.polling ??= this.poll().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  /** Stops watching; the last settings stay readable. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.listeners.clear();
    await this.polling;
  }

  private async poll(): Promise<void> {
    let stored: Settings | null;
    try {
      stored = await this.options.store.load();
    } catch (err) {
      this.options.logger.warn({ err }, 'could not read settings; keeping the current ones');
      return;
    }
    if (stored === null || stored.version <= this.settings.version || stored.version === this.rejectedVersion) return;
    try {
      this.apply(normalise(stored));
    } catch (err) {
      this.rejectedVersion = stored.version;
      this.options.logger.error({ err, version: stored.version }, 'stored settings are invalid; keeping the current ones');
    }
  }

  /** Only ever moves forward: a slow poll must not undo a newer update. */
  private apply(next: Settings): void {
    const previous = this.settings;
    if (next.version <= previous.version) return;
    this.settings = frozen(next);
    this.options.logger.info(
      { version: next.version, tiers: next.tiers, limits: next.limits, hookTenants: Object.keys(next.hooks) },
      'settings changed',
    );
    for (const listener of this.listeners) {
      try {
        listener(next, previous);
      } catch (err) {
        this.options.logger.error({ err }, 'settings listener failed');
      }
    }
  }

  /** The base an update patches: the stored values, or defaults when they are invalid. */
  private baseFor(stored: Settings): Settings {
    try {
      return normalise(stored);
    } catch {
      // An invalid record is replaced as a whole by defaults + the patch, at its version.
      return this.defaults(stored.version);
    }
  }

  private defaults(version: number): Settings {
    return { tiers: { ...DEFAULT_TIER_THRESHOLDS }, limits: { ...DEFAULT_LIMITS }, hooks: {}, version };
  }
}

/**
 * A stored record as this version of the code understands it: fields added since it was saved
 * take their defaults, then both halves are validated.
 */
function normalise(stored: Settings): Settings {
  return {
    tiers: validateThresholds({ ...DEFAULT_TIER_THRESHOLDS, ...stored.tiers }),
    limits: validateLimits({ ...DEFAULT_LIMITS, ...stored.limits }),
    hooks: Object.fromEntries(Object.entries(stored.hooks ?? {}).map(([tenant, h]) => [tenant, validateTenantHooks(h)])),
    version: stored.version,
  };
}

/** The hooks after one tenant's patch; a tenant left with no override is dropped. */
function patchHooks(current: Record<string, TenantHooks>, change: SettingsPatch['hooks']): Record<string, TenantHooks> {
  if (change === undefined) return current;
  if (!ID_PATTERN.test(change.tenant)) throw new BadRequestError(`tenant: invalid id`);
  const next = { ...current };
  const patched = applyHooksPatch(current[change.tenant] ?? {}, validateHooksPatch(change.patch));
  if (Object.keys(patched).length === 0) delete next[change.tenant];
  else next[change.tenant] = patched;
  return next;
}

/** What tiers()/limits() hand out is shared by every reader: nobody may change it in place. */
function frozen(s: Settings): Settings {
  const hooks = Object.freeze(Object.fromEntries(Object.entries(s.hooks).map(([t, h]) => [t, Object.freeze({ ...h })])));
  return Object.freeze({ tiers: Object.freeze({ ...s.tiers }), limits: Object.freeze({ ...s.limits }), hooks, version: s.version });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `{a: undefined}` must not overwrite a stored value (JSON bodies and CLI flags omit fields). */
function definedOnly<T extends object>(patch: T | undefined): Partial<T> {
  const out: Partial<T> = {};
  if (patch === undefined) return out;
  for (const [key, value] of Object.entries(patch)) {
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}
