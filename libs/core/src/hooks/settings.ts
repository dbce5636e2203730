/**
 * The one home of hook settings rules: what a valid setting is, the defaults, how a tenant's
 * override layers over the process defaults, and what may be shown of them (never a secret).
 */
import { BadRequestError } from '../errors.ts';
import { LOGIN_POLICIES, type LoginPolicy, type SendPolicy } from '../policies/types.ts';
import type { HookFailureMode, ResolvedHooks, TenantHooks } from './types.ts';

export const DEFAULT_HOOKS: ResolvedHooks = Object.freeze({
  secret: undefined,
  notifyUrl: undefined,
  notifyWindowMs: 1_000,
  notifyPreview: false,
  beforeSendUrl: undefined,
  beforeSendTimeoutMs: 2_000,
  beforeSendFailure: 'closed',
  afterSendUrl: undefined,
  sendPolicy: 'open',
  loginPolicy: 'all',
});

export const HOOK_LIMITS = Object.freeze({
  secretMinLength: 16,
  secretMaxLength: 512,
  urlMaxLength: 2_048,
  notifyWindowMs: { min: 0, max: 60_000 },
  beforeSendTimeoutMs: { min: 10, max: 30_000 },
});

const KEYS: readonly (keyof TenantHooks)[] = [
  'secret',
  'notifyUrl',
  'notifyWindowMs',
  'notifyPreview',
  'beforeSendUrl',
  'beforeSendTimeoutMs',
  'beforeSendFailure',
  'afterSendUrl',
  'sendPolicy',
  'loginPolicy',
];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `""` is a valid URL setting: "none for this tenant", overriding a process default. */
function url(name: string, v: unknown): string {
  if (v === '') return '';
  if (typeof v !== 'string' || v.length > HOOK_LIMITS.urlMaxLength || !URL.canParse(v)) throw new BadRequestError(`${name}: not a URL`);
  const parsed = new URL(v);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new BadRequestError(`${name}: must be http(s)`);
  if (parsed.username !== '' || parsed.password !== '')
    throw new BadRequestError(`${name}: credentials in a URL are refused; use the secret`);
  return parsed.toString();
}

function int(name: string, v: unknown, range: { min: number; max: number }): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < range.min || v > range.max) {
    throw new BadRequestError(`${name}: an integer from ${range.min} to ${range.max}`);
  }
  return v;
}

function oneOf<T extends string>(name: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw new BadRequestError(`${name}: one of ${allowed.join(', ')}`);
  return v as T;
}

/**
 * Checks a patch or a stored record: known keys only, each valid; `null` clears a key (back to
 * the default). Throws BadRequestError naming the key, never echoing a secret.
 */
export function validateHooksPatch(input: unknown): { [K in keyof TenantHooks]?: TenantHooks[K] | null } {
  if (!isObject(input)) throw new BadRequestError('hooks: an object');
  const out: { [K in keyof TenantHooks]?: TenantHooks[K] | null } = {};
  for (const [key, v] of Object.entries(input)) {
    if (!(KEYS as readonly string[]).includes(key)) throw new BadRequestError(`hooks: unknown setting ${key}`);
    const k = key as keyof TenantHooks;
    if (v === null) {
      out[k] = null;
      continue;
    }
    switch (k) {
      case 'secret':
        if (typeof v !== 'string' || v.length < HOOK_LIMITS.secretMinLength || v.length > HOOK_LIMITS.secretMaxLength) {
          throw new BadRequestError(`secret: ${HOOK_LIMITS.secretMinLength} to ${HOOK_LIMITS.secretMaxLength} characters`);
        }
        out.secret = v;
        break;
      case 'notifyUrl':
      case 'beforeSendUrl':
      case 'afterSendUrl':
        out[k] = url(k, v);
        break;
      case 'notifyWindowMs':
        out.notifyWindowMs = int(k, v, HOOK_LIMITS.notifyWindowMs);
        break;
      case 'beforeSendTimeoutMs':
        out.beforeSendTimeoutMs = int(k, v, HOOK_LIMITS.beforeSendTimeoutMs);
        break;
      case 'notifyPreview':
        if (typeof v !== 'boolean') throw new BadRequestError('notifyPreview: true or false');
        out.notifyPreview = v;
        break;
      case 'beforeSendFailure':
        out.beforeSendFailure = oneOf<HookFailureMode>(k, v, ['closed', 'open']);
        break;
      case 'sendPolicy':
        out.sendPolicy = oneOf<SendPolicy>(k, v, ['open', 'shared-group']);
        break;
      case 'loginPolicy':
        out.loginPolicy = oneOf<LoginPolicy>(k, v, LOGIN_POLICIES);
        break;
    }
  }
  return out;
}

/** A whole stored/override record (no nulls): validated like a patch. */
export function validateTenantHooks(input: unknown): TenantHooks {
  return applyHooksPatch({}, validateHooksPatch(input));
}

/** The record after a validated patch: `null` removes a key. */
export function applyHooksPatch(current: TenantHooks, patch: { [K in keyof TenantHooks]?: TenantHooks[K] | null }): TenantHooks {
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined) delete next[k];
    else next[k] = v;
  }
  return next;
}

/** Defaults ← process defaults (environment) ← the tenant's override. */
export function resolveHooks(processDefaults: TenantHooks, tenant: TenantHooks | undefined): ResolvedHooks {
  const out: ResolvedHooks = { ...DEFAULT_HOOKS };
  for (const source of [processDefaults, tenant ?? {}]) {
    for (const [k, v] of Object.entries(source)) if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
  }
  // An empty URL switches a hook off for the tenant.
  for (const k of ['notifyUrl', 'beforeSendUrl', 'afterSendUrl'] as const) if (out[k] === '') out[k] = undefined;
  return out;
}

/** What may be shown of a tenant's hooks: everything but the secret, which becomes `secretSet`. */
export function redactHooks(hooks: TenantHooks | ResolvedHooks): Omit<TenantHooks, 'secret'> & { secretSet: boolean } {
  const { secret, ...rest } = hooks;
  const shown: Record<string, unknown> = { ...rest, secretSet: typeof secret === 'string' && secret.length > 0 };
  for (const [k, v] of Object.entries(shown)) if (v === undefined) delete shown[k];
  return shown as Omit<TenantHooks, 'secret'> & { secretSet: boolean };
}
