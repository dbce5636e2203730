/**
 * Hooks and devices: the app's own services around the inbox (docs/protocol.md, "Hooks
 * and devices"). Types and ports only; the rules are beside them (settings.ts, before-send.ts,
 * notify.ts), the login and send policies in ../policies, and the HTTP adapter is @seqline/hooks.
 */
import type { Conv } from '../entry.ts';
import type { LoginPolicy, Platform, SendPolicy } from '../policies/types.ts';

/** What a fail-closed before-send hook does when it cannot answer: refuse (closed) or allow (open). */
export type HookFailureMode = 'closed' | 'open';

/**
 * One tenant's hook settings as stored and patched (every field optional: absent = the
 * process default from the environment, then the built-in default). Secrets are write-only:
 * never logged, never returned (see redactHooks).
 */
export interface TenantHooks {
  /** HMAC-SHA256 key of every hook call's `Seqline-Signature`. */
  secret?: string;
  notifyUrl?: string;
  /** Offline notifications of one user within this window go out as one call. */
  notifyWindowMs?: number;
  /** Put a short text preview of each message in offline notifications. */
  notifyPreview?: boolean;
  beforeSendUrl?: string;
  beforeSendTimeoutMs?: number;
  beforeSendFailure?: HookFailureMode;
  afterSendUrl?: string;
  sendPolicy?: SendPolicy;
  loginPolicy?: LoginPolicy;
}

/** A tenant's hooks with every default applied: what the code runs on. */
export interface ResolvedHooks {
  secret: string | undefined;
  notifyUrl: string | undefined;
  notifyWindowMs: number;
  notifyPreview: boolean;
  beforeSendUrl: string | undefined;
  beforeSendTimeoutMs: number;
  beforeSendFailure: HookFailureMode;
  afterSendUrl: string | undefined;
  sendPolicy: SendPolicy;
  loginPolicy: LoginPolicy;
}

/** Reads the live hooks of a tenant (env defaults + the tenant's stored override), on every use. */
export type HooksOf = (tenant: string) => ResolvedHooks;

// ---------------------------------------------------------------- payloads (the wire contract)

export interface NotifyItem {
  seq: number;
  conv: Conv;
  from: string;
  appinfo: string;
  mention: boolean;
  /** Only when the tenant allows previews (notifyPreview). */
  preview?: string;
}

export interface NotifyPayload {
  type: 'notify';
  tenant: string;
  user: string;
  /** The user's total unread when the notification was built (the conversation index and the group streams). */
  badge: number;
  /** Only when a group stream's count stopped at its bound: `badge` is a lower bound ("N+"). */
  badgeCapped?: true;
  entries: NotifyItem[];
}

export interface BeforeSendPayload {
  type: 'before_send';
  tenant: string;
  from: string;
  /** `{user}` or `{group}`, as in the send frame. */
  to: { user: string } | { group: string };
  appinfo: string;
  msgType: string;
  body: unknown;
}

/** A before-send hook's answer, checked (parseBeforeSendAnswer). */
export type BeforeSendDecision = { allow: true; body?: unknown } | { allow: false; reason: string };

export interface AfterSendPayload {
  type: 'after_send';
  tenant: string;
  from: string;
  to: { user: string } | { group: string };
  appinfo: string;
  seq: number;
  sendTime: number;
  msgType: string;
  body: unknown;
}

// ---------------------------------------------------------------- ports

export interface HookCall {
  url: string;
  /** Signs the call when set (`Seqline-Timestamp`, `Seqline-Signature`). */
  secret: string | undefined;
  /** The exact bytes sent and signed. */
  body: string;
  timeoutMs: number;
}

export interface HookResponse {
  status: number;
  /** The response body as text, cut at a bound (an answer is small). */
  body: string;
}

/**
 * Posts one hook call. Resolves with any HTTP answer (the caller judges the status); rejects
 * with HookUnreachableError when there is none (refused, reset, DNS, timeout).
 */
export interface HookTransport {
  post(call: HookCall): Promise<HookResponse>;
}

/** A live session of a user on some gateway (`seqline-admin devices`). */
export interface DeviceSession {
  /** Unique per socket, made by the gateway. */
  session: string;
  /** Device id from the token's `dev` or the connect URL; absent = unnamed. */
  dev?: string;
  plat?: Platform;
  /** Epoch ms the socket was accepted. */
  since: number;
  /** The gateway process holding it. */
  gateway: string;
}
