/**
 * The process-wide hook defaults (docs/protocol.md, "Hooks and devices"), read from the
 * environment once at start by both modes. Values are checked by core's hook rules, so the
 * environment and the admin API accept exactly the same settings; a message names the
 * variable and never repeats its value (it may be, or contain, a secret).
 */
import { readFileSync } from 'node:fs';
import { BadRequestError, ConfigError, validateHooksPatch, type Logger, type TenantHooks } from '@seqline/core';
import { z } from 'zod';

/** Unset or empty is "no default" (an empty `SEQLINE_NOTIFY_URL=` in a compose file turns it off). */
const optional = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export const hookEnvSchema = z.object({
  SEQLINE_HOOK_SECRET: optional,
  SEQLINE_HOOK_SECRET_FILE: optional,
  SEQLINE_NOTIFY_URL: optional,
  SEQLINE_NOTIFY_WINDOW_MS: optional,
  SEQLINE_BEFORE_SEND_URL: optional,
  SEQLINE_BEFORE_SEND_TIMEOUT_MS: optional,
  SEQLINE_BEFORE_SEND_FAILURE: optional,
  SEQLINE_AFTER_SEND_URL: optional,
  SEQLINE_SEND_POLICY: optional,
  SEQLINE_LOGIN_POLICY: optional,
});
type HookEnv = z.infer<typeof hookEnvSchema>;

/** Which setting each variable gives, and whether its text is a number. */
const VARIABLES: ReadonlyArray<[keyof HookEnv, keyof TenantHooks, 'text' | 'integer']> = [
  ['SEQLINE_NOTIFY_URL', 'notifyUrl', 'text'],
  ['SEQLINE_NOTIFY_WINDOW_MS', 'notifyWindowMs', 'integer'],
  ['SEQLINE_BEFORE_SEND_URL', 'beforeSendUrl', 'text'],
  ['SEQLINE_BEFORE_SEND_TIMEOUT_MS', 'beforeSendTimeoutMs', 'integer'],
  ['SEQLINE_BEFORE_SEND_FAILURE', 'beforeSendFailure', 'text'],
  ['SEQLINE_AFTER_SEND_URL', 'afterSendUrl', 'text'],
  ['SEQLINE_SEND_POLICY', 'sendPolicy', 'text'],
  ['SEQLINE_LOGIN_POLICY', 'loginPolicy', 'text'],
];

export interface HookDefaultsReading {
  hooks: TenantHooks;
  /** One line per bad variable, `NAME: what is wrong`; empty when all are valid. */
  issues: string[];
}

/**
 * Reads every hook variable, collecting one issue per bad one (so a start-up failure lists
 * them all, beside the other configuration errors). `readFile` is for tests.
 */
export function readHookDefaults(env: NodeJS.ProcessEnv, readFile: (path: string) => string = readUtf8): HookDefaultsReading {
  const vars = hookEnvSchema.parse(env);
  const hooks: TenantHooks = {};
  const issues: string[] = [];
  const take = (name: string, key: keyof TenantHooks, value: unknown): void => {
    try {
      Object.assign(hooks, validateHooksPatch({ [key]: value }));
    } catch (err) {
      if (!(err instanceof BadRequestError)) throw err;
      // Core names the setting first ("notifyUrl: not a URL"); name the variable instead.
      issues.push(`${name}: ${err.message.replace(/^[A-Za-z]+: /, '')}`);
    }
  };
  for (const [name, key, kind] of VARIABLES) {
    const raw = vars[name];
    if (raw !== undefined) take(name, key, kind === 'integer' && /^\d{1,15}$/.test(raw) ? Number(raw) : raw);
  }
  const secret = secretOf(vars, readFile, issues);
  if (secret !== undefined) take(secret.from, 'secret', secret.value);
  return { hooks, issues };
}

/** The defaults, or a ConfigError naming every bad variable. */
export function parseHookDefaults(env: NodeJS.ProcessEnv, readFile?: (path: string) => string): TenantHooks {
  const { hooks, issues } = readHookDefaults(env, readFile);
  if (issues.length > 0) throw new ConfigError(`invalid configuration:\n  ${issues.join('\n  ')}`);
  return hooks;
}

/** A hook URL without a secret is allowed (e.g. a receiver on a private network) but unsigned: say so once. */
export function warnUnsignedHooks(defaults: TenantHooks, logger: Logger): void {
  if (defaults.secret !== undefined) return;
  const urls = (['notifyUrl', 'beforeSendUrl', 'afterSendUrl'] as const).filter((key) => defaults[key] !== undefined);
  if (urls.length > 0) {
    logger.warn({ hooks: urls }, 'hook URLs are set without SEQLINE_HOOK_SECRET(_FILE): hook calls go out unsigned');
  }
}

function secretOf(vars: HookEnv, readFile: (path: string) => string, issues: string[]): { from: string; value: string } | undefined {
  const inline = vars.SEQLINE_HOOK_SECRET;
  const path = vars.SEQLINE_HOOK_SECRET_FILE;
  if (inline !== undefined && path !== undefined) {
    issues.push('SEQLINE_HOOK_SECRET_FILE: set either SEQLINE_HOOK_SECRET or SEQLINE_HOOK_SECRET_FILE, not both');
    return undefined;
  }
  if (inline !== undefined) return { from: 'SEQLINE_HOOK_SECRET', value: inline };
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    issues.push(`SEQLINE_HOOK_SECRET_FILE: cannot read ${path} (${code})`);
    return undefined;
  }
  // Surrounding whitespace (the newline editors and `echo` add) is not part of the secret, as with SEQLINE_HOOK_SECRET.
  const value = text.trim();
  if (value === '') {
    issues.push(`SEQLINE_HOOK_SECRET_FILE: ${path} is empty`);
    return undefined;
  }
  return { from: 'SEQLINE_HOOK_SECRET_FILE', value };
}

function readUtf8(path: string): string {
  return readFileSync(path, 'utf8');
}
