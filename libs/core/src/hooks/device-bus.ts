/**
 * The device bus port: how a new login reaches the sessions of its user on every gateway
 * (docs/protocol.md, "Devices and the login policy"). Embedded, one gateway holds them all
 * (localDeviceBus); distributed, the gateways ask each other over core NATS (@seqline/bus).
 *
 * A displacement compares no clocks. It has two steps on every gateway holding the user:
 * 1. pick: the gateway names what the login displaces among the sessions it holds when it
 *    handles the request (core's displacedSessions: every one of them came first);
 * 2. kick: the login's gateway asks it to kick those, only while the login itself is still
 *    live; kicks that crossed spare one side (core's sparedInCrossing).
 * On the login's own gateway both steps run at once, before anything is sent.
 */
import type { Logger } from '../logger.ts';
import type { LoginPolicy } from '../policies/types.ts';
import type { DeviceSession } from './types.ts';

/** A new login: displace what `policy` says among the older sessions of `tenant:user`. */
export interface DisplaceRequest {
  tenant: string;
  user: string;
  /** The policy read by the gateway of the new login, applied by every gateway alike. */
  policy: LoginPolicy;
  incoming: DeviceSession;
}

/** The second step: kick `sessions` (named by this gateway's pick) for the login `incoming`. */
export interface KickRequest {
  tenant: string;
  user: string;
  incoming: DeviceSession;
  sessions: readonly string[];
}

/** What one gateway does with a kick: how many of its sessions go, and when they were told. */
export interface Displacement {
  displaced: number;
  /** Resolves once every displaced session here received its `kicked` frame (or is gone). */
  told: Promise<void>;
}

/** The sessions one gateway holds, as the bus needs them (the gateway implements it). */
export interface DeviceHolder {
  /** The live sessions here that `request` displaces; nothing is kicked yet. */
  pick(request: DisplaceRequest): string[];
  /** Kicks those of `request.sessions` still live here. */
  kick(request: KickRequest): Displacement;
  /** The live sessions of a user here (a session being kicked is no longer live). */
  list(tenant: string, user: string): DeviceSession[];
}

/**
 * How a displacement ended: every displaced session told (`told`); the bound reached first
 * (`bound`: a gateway did not answer or tell in time); or a kick failed (`failed`, logged).
 * The new login is served in every case.
 */
export type DisplaceOutcome = 'told' | 'bound' | 'failed';

/** Default bound of a displacement: a displaced session waits up to 5 s for its requests, plus 1 s. */
export const DISPLACE_MAX_WAIT_MS = 6_000;

export interface DeviceBus {
  /** Starts answering for `tenant:user` here (the gateway opened a socket of theirs). Counted. */
  hold(tenant: string, user: string): void;
  /** Stops answering once every hold of `tenant:user` was released. */
  release(tenant: string, user: string): void;
  /**
   * Displaces here first (no network involved), then on every other gateway holding the user.
   * Resolves once every displaced session was told, or at the bus's bound. Never rejects.
   */
  displace(request: DisplaceRequest): Promise<DisplaceOutcome>;
  /** The user's live sessions on every gateway that answered within the bus's bound. */
  list(tenant: string, user: string): Promise<DeviceSession[]>;
  close(): Promise<void>;
}

/** Builds a gateway's bus once the gateway (the holder of its sessions) exists. */
export type DeviceBusFactory = (holder: DeviceHolder) => DeviceBus;

/**
 * Both steps on this gateway's own sessions, at once: every session it holds came before the
 * login. `told` settles `told` or `failed` (a throwing holder is logged here), never rejects.
 */
export function displaceHere(holder: DeviceHolder, request: DisplaceRequest, logger: Logger): Promise<'told' | 'failed'> {
  try {
    const sessions = holder.pick(request);
    if (sessions.length === 0) return Promise.resolve('told');
    const { told } = holder.kick({ tenant: request.tenant, user: request.user, incoming: request.incoming, sessions });
    return told.then(
      () => 'told' as const,
      (err: unknown) => failed(logger, err, request),
    );
  } catch (err) {
    return Promise.resolve(failed(logger, err, request));
  }
}

/** `outcome`, or `bound` once `ms` passed first. */
export function withinBound<T>(outcome: Promise<T>, ms: number): Promise<T | 'bound'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<'bound'>((resolve) => {
    timer = setTimeout(resolve, ms, 'bound');
  });
  return Promise.race([outcome, bound]).finally(() => clearTimeout(timer));
}

export interface LocalDeviceBusOptions {
  logger: Logger;
  /** The longest a login waits for its displaced sessions to be told (default DISPLACE_MAX_WAIT_MS). */
  maxWaitMs?: number;
}

/** One process holds every session: the bus is the holder itself. */
export function localDeviceBus(holder: DeviceHolder, options: LocalDeviceBusOptions): DeviceBus {
  const maxWaitMs = options.maxWaitMs ?? DISPLACE_MAX_WAIT_MS;
  return {
    hold: () => undefined,
    release: () => undefined,
    displace: async (request) => {
      const outcome = await withinBound(displaceHere(holder, request, options.logger), maxWaitMs);
      if (outcome === 'bound')
        options.logger.warn({ tenant: request.tenant, user: request.user, maxWaitMs }, 'displaced sessions not told within the bound');
      return outcome;
    },
    list: async (tenant, user) => holder.list(tenant, user),
    close: async () => undefined,
  };
}

function failed(logger: Logger, err: unknown, request: DisplaceRequest): 'failed' {
  logger.error({ err, tenant: request.tenant, user: request.user }, 'displacing sessions failed');
  return 'failed';
}
