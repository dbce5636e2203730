/**
 * What the gateways send each other on the device bus (nats-device-bus.ts), and the checks a
 * message from another process passes before it is used: anything malformed is dropped.
 */
import type { Msg } from '@nats-io/transport-node';
import { LOGIN_POLICIES, parseDevice, type DeviceSession, type DisplaceRequest, type KickRequest } from '@seqline/core';

/** Sessions per kick request: far below max_payload (a user holds a handful). */
export const MAX_KICK_SESSIONS = 1_000;

/** On the user's subject: `pick` (the first step of a displacement) or `list`. */
export type UserRequest = { op: 'list'; from: string } | { op: 'pick'; from: string; displace: DisplaceRequest };

/** On one bus's own subject: kick what it picked (the second step). */
export interface KickMessage {
  from: string;
  kick: KickRequest;
}

/** What comes back to an asker's inbox. */
export type Reply =
  | { step: 'picked'; from: string; sessions: string[] }
  | { step: 'told'; from: string; displaced: number; failed: boolean }
  | { step: 'listed'; from: string; sessions: DeviceSession[] };

type Body = Record<string, unknown>;

/** A bus id names a subject token: anything else from the network is refused. */
const BUS_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function bodyOf(msg: Msg): Body {
  try {
    const value: unknown = msg.json();
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : {};
  } catch {
    return {};
  }
}

/** A request for this very subject's user, well formed, with a reply subject; else null. */
export function parseUserRequest(msg: Msg, tenant: string, user: string): UserRequest | null {
  const body = bodyOf(msg);
  const from = body['from'];
  if (body['tenant'] !== tenant || body['user'] !== user || typeof from !== 'string' || !msg.reply) return null;
  if (body['op'] === 'list') return { op: 'list', from };
  const policy = LOGIN_POLICIES.find((p) => p === body['policy']);
  if (body['op'] !== 'pick' || policy === undefined || !isDeviceSession(body['incoming'])) return null;
  return { op: 'pick', from, displace: { tenant, user, policy, incoming: body['incoming'] } };
}

export function parseKick(msg: Msg): KickMessage | null {
  const body = bodyOf(msg);
  const { from, tenant, user, incoming, sessions } = body;
  if (typeof from !== 'string' || typeof tenant !== 'string' || typeof user !== 'string' || !msg.reply) return null;
  if (!isDeviceSession(incoming) || !isIds(sessions)) return null;
  return { from, kick: { tenant, user, incoming, sessions } };
}

export function parseReply(msg: Msg): Reply | null {
  const body = bodyOf(msg);
  const from = body['from'];
  if (typeof from !== 'string' || !BUS_ID.test(from)) return null;
  if (body['step'] === 'picked' && isIds(body['sessions'])) return { step: 'picked', from, sessions: body['sessions'] };
  if (body['step'] === 'told' && typeof body['displaced'] === 'number')
    return { step: 'told', from, displaced: body['displaced'], failed: body['failed'] === true };
  if (body['step'] === 'listed' && Array.isArray(body['sessions']))
    return { step: 'listed', from, sessions: (body['sessions'] as unknown[]).filter(isDeviceSession) };
  return null;
}

function isIds(value: unknown): value is string[] {
  return Array.isArray(value) && value.length <= MAX_KICK_SESSIONS && value.every((s) => typeof s === 'string');
}

export function isDeviceSession(value: unknown): value is DeviceSession {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  if (typeof s['session'] !== 'string' || typeof s['gateway'] !== 'string' || typeof s['since'] !== 'number') return false;
  try {
    parseDevice(s['dev'], s['plat'], 'session');
    return true;
  } catch {
    return false;
  }
}
