/**
 * The built-in policies a tenant picks (docs/protocol.md, "Devices and the login policy",
 * "Send policy"): their values only, so the hook settings that store them and the rules that
 * apply them (login-policy.ts, send-policy.ts) share one definition.
 */

export type LoginPolicy = 'all' | 'one-per-platform' | 'one';
export const LOGIN_POLICIES: readonly LoginPolicy[] = ['all', 'one-per-platform', 'one'];

export type Platform = 'ios' | 'android' | 'web' | 'desktop';
export const PLATFORMS: readonly Platform[] = ['ios', 'android', 'web', 'desktop'];

/** Built-in relationship check of 1:1 sends, used with or without a before-send hook. */
export type SendPolicy = 'open' | 'shared-group';
