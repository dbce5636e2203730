/**
 * The login policy rule (docs/protocol.md, "Devices and the login policy"): which of a user's
 * live sessions a new login displaces. Pure: the gateways apply it to the sessions they hold.
 */
import { BadRequestError } from '../errors.ts';
import { ID_PATTERN } from '../ids.ts';
import { PLATFORMS, type LoginPolicy, type Platform } from './types.ts';

/** The new session as the rule sees it; `session` keeps it from displacing itself. */
export interface IncomingDevice {
  dev?: string;
  plat?: Platform;
  /** The new socket's own id: never displaced by itself. */
  session?: string;
}

/** A live session as the rule sees it: its id and the device it named. */
export interface DeviceSlot {
  session: string;
  dev?: string;
  plat?: Platform;
}

/**
 * The live sessions `incoming` displaces under `policy`:
 * - `all`: none (every session stays, the default);
 * - `one-per-platform`: those on the incoming platform, and those of the same device id (a
 *   device reconnecting replaces its older socket). A session without a platform is displaced
 *   only by its own device id or by `one`; an incoming session without one displaces only its
 *   own device id;
 * - `one`: every other session.
 *
 * `live` is what one gateway holds when it handles the login. All of it is older than the
 * login, with no clock to compare: the login was accepted before its request was sent, so a
 * session the gateway holds when the request arrives came first. Two logins racing on two
 * gateways may each find the other so; the kick step settles that (sparedInCrossing).
 */
export function displacedSessions<S extends DeviceSlot>(policy: LoginPolicy, live: readonly S[], incoming: IncomingDevice): S[] {
  if (policy === 'all') return [];
  return live.filter((s) => s.session !== incoming.session && (policy === 'one' || sameSlot(s, incoming)));
}

function sameSlot(s: DeviceSlot, incoming: IncomingDevice): boolean {
  if (incoming.dev !== undefined && s.dev === incoming.dev) return true;
  return incoming.plat !== undefined && s.plat === incoming.plat;
}

/**
 * Whether a gateway asked to kick `target` for the login `incoming` keeps it: only when the
 * two kicks crossed, i.e. `target`'s own login already asked to kick `incoming`
 * (`targetAsked`: the sessions it asked to kick). Then of the two the greater session id stays;
 * both gateways see both ids, so they decide alike and exactly one of the two logins stays.
 */
export function sparedInCrossing(target: string, incoming: string, targetAsked: ReadonlySet<string> | undefined): boolean {
  return targetAsked?.has(incoming) === true && target > incoming;
}

/**
 * A login clock for one gateway: epoch ms, but strictly increasing, so the sessions of one
 * gateway list (`seqline-admin devices`) in the order they came. It orders nothing across
 * gateways: displacement compares no clocks (displacedSessions).
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
