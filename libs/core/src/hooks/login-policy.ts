/**
 * The login policy rule (docs/protocol.md, "Devices and the login policy"): which of a user's
 * live sessions a new login displaces. Pure: the gateways apply it to the sessions they hold.
 */
import { BadRequestError } from '../errors.ts';
import { ID_PATTERN } from '../ids.ts';
import { PLATFORMS, type DeviceSession, type LoginPolicy, type Platform } from './types.ts';

/** The new session as the rule sees it; `session` and `since` order it against the live ones. */
export interface IncomingDevice {
  dev?: string;
  plat?: Platform;
  /** The new socket's own id: never displaced by itself. */
  session?: string;
  /** When the new socket was accepted (epoch ms): only older sessions are displaced. */
  since?: number;
}

/**
 * The live sessions `incoming` displaces under `policy`:
 * - `all`: none (v1 behaviour, the default);
 * - `one-per-platform`: those on the incoming platform, and those of the same device id (a
 *   device reconnecting replaces its older socket). A session without a platform is displaced
 *   only by its own device id or by `one`; an incoming session without one displaces only its
 *   own device id;
 * - `one`: every other session.
 * Only sessions older than the incoming one go (by `since`, then `session` id), so two logins
 * racing on two gateways never displace each other: the newer one stays.
 */
export function displacedSessions(policy: LoginPolicy, live: readonly DeviceSession[], incoming: IncomingDevice): DeviceSession[] {
  if (policy === 'all') return [];
  return live.filter((s) => isOlder(s, incoming) && (policy === 'one' || sameSlot(s, incoming)));
}

function sameSlot(s: DeviceSession, incoming: IncomingDevice): boolean {
  if (incoming.dev !== undefined && s.dev === incoming.dev) return true;
  return incoming.plat !== undefined && s.plat === incoming.plat;
}

function isOlder(s: DeviceSession, incoming: IncomingDevice): boolean {
  if (incoming.session !== undefined && s.session === incoming.session) return false;
  if (incoming.since === undefined) return true;
  if (s.since !== incoming.since) return s.since < incoming.since;
  return incoming.session === undefined || s.session < incoming.session;
}

/**
 * A login clock for one gateway: epoch ms, but strictly increasing, so two logins that land in
 * the same millisecond on one gateway are still ordered as they came (a tie would fall to the
 * random session ids, and the older socket could survive the newer one).
 */
export function loginClock(now: () => number): () => number {
  let last = -Infinity;
  return () => (last = Math.max(now(), last + 1));
}

export function isPlatform(value: unknown): value is Platform {
  return typeof value === 'string' && (PLATFORMS as readonly string[]).includes(value);
}

/** A device id: the charset of user ids (ID_PATTERN). */
export function isDeviceId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}

/**
 * The device a client names (token claims or connect URL), checked: absent fields stay absent,
 * a present but invalid one is refused. `where` names the source in the error.
 */
export function parseDevice(dev: unknown, plat: unknown, where: string): { dev?: string; plat?: Platform } {
  const out: { dev?: string; plat?: Platform } = {};
  if (dev !== undefined) {
    if (!isDeviceId(dev)) throw new BadRequestError(`${where} dev: 1 to 64 of A-Z a-z 0-9 _ . @ -`);
    out.dev = dev;
  }
  if (plat !== undefined) {
    if (!isPlatform(plat)) throw new BadRequestError(`${where} plat: one of ${PLATFORMS.join(', ')}`);
    out.plat = plat;
  }
  return out;
}
