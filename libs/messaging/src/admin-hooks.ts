/**
 * The operator's view and change of one tenant's hook settings (`seqline-admin hooks show|set`,
 * `GET|PUT /v1/admin/hooks/:tenant`). Values are checked by core's hook rules; a secret is
 * write-only: answers say `secretSet`, never the secret.
 */
import { BadRequestError, redactHooks, resolveHooks, validateHooksPatch, type HooksOf } from '@seqline/core';
import { checkId } from './admin-checks.ts';
import type { LiveSettings } from './live-settings.ts';

/** What may be shown of hook settings: every field but the secret, plus whether one is set. */
export type ShownHooks = ReturnType<typeof redactHooks>;

export interface HooksView {
  tenant: string;
  /** What the tenant runs on: built-in defaults ← process defaults (environment) ← its override. */
  hooks: ShownHooks;
  /** The tenant's stored override alone (`{secretSet: false}` when it has none). */
  override: ShownHooks;
  /** The settings version this view was read at. */
  version: number;
}

export interface AdminHooksDeps {
  settings: Pick<LiveSettings, 'current' | 'update'>;
  /** The hooks this process runs on (MessagingDeps.hooks.of); absent: built-in defaults under the override. */
  hooksOf?: HooksOf;
}

export class AdminHooks {
  constructor(private readonly d: AdminHooksDeps) {}

  show(tenant: string): HooksView {
    checkId('tenant', tenant);
    return this.view(tenant);
  }

  /** Applies a patch (`null` clears a key back to the process default) to the tenant's override. */
  async set(tenant: string, patch: unknown): Promise<HooksView> {
    checkId('tenant', tenant);
    // Checked here too, so a bad patch is refused before any store round trip.
    const checked = validateHooksPatch(patch);
    if (Object.keys(checked).length === 0) throw new BadRequestError('hooks: nothing to change');
    await this.d.settings.update({ hooks: { tenant, patch: checked } });
    return this.view(tenant);
  }

  private view(tenant: string): HooksView {
    const current = this.d.settings.current();
    const override = Object.hasOwn(current.hooks, tenant) ? current.hooks[tenant] : undefined;
    const resolved = this.d.hooksOf?.(tenant) ?? resolveHooks({}, override);
    return { tenant, hooks: redactHooks(resolved), override: redactHooks(override ?? {}), version: current.version };
  }
}
