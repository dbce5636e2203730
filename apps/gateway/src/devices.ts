/**
 * The login policy on one gateway (docs/protocol.md, "Devices and the login policy"): the
 * sessions it holds by user, what a new login displaces among them (core's displacedSessions),
 * and the device bus that carries a login to the other gateways.
 */
import {
  displacedSessions,
  localDeviceBus,
  type DeviceBus,
  type DeviceBusFactory,
  type DeviceHolder,
  type DeviceSession,
  type DisplaceOutcome,
  type DisplaceRequest,
  type Displacement,
  type KickRequest,
  type Logger,
  type LoginPolicy,
} from '@seqline/core';
import type { ClientSession } from './client-session.ts';

export interface GatewayDevicesOptions {
  /** This gateway's name in DeviceSession.gateway. */
  gateway: string;
  loginPolicyOf: (tenant: string) => LoginPolicy;
  /** Default: the in-process bus (this gateway holds every session). */
  bus?: DeviceBusFactory;
  /** How long a displaced session waits for its in-flight requests before it is told. */
  drainMs: number;
  logger: Logger;
  /** Counts how each login's displacement ended (metrics). */
  onDisplaced?: (outcome: DisplaceOutcome) => void;
}

export class GatewayDevices implements DeviceHolder {
  private readonly byUser = new Map<string, Set<ClientSession>>();
  readonly bus: DeviceBus;

  constructor(private readonly options: GatewayDevicesOptions) {
    // One process holds every session: a login waits at most for their drain, plus a second.
    const local: DeviceBusFactory = (holder) => localDeviceBus(holder, { logger: options.logger, maxWaitMs: options.drainMs + 1_000 });
    this.bus = (options.bus ?? local)(this);
  }

  /**
   * Registers a new socket and displaces what the tenant's policy says: on this gateway at once,
   * then on every other one; the socket serves no request before they were told (or the bus's
   * bound). The displacement never fails the login: a failure is logged and counted.
   */
  opened(session: ClientSession): void {
    const { tenant, user } = session.caller;
    const key = keyOf(tenant, user);
    let mine = this.byUser.get(key);
    if (mine === undefined) this.byUser.set(key, (mine = new Set()));
    mine.add(session);
    this.bus.hold(tenant, user);
    const policy = this.policyOf(tenant);
    if (policy === 'all') return; // nothing to displace: no round trip
    // Async, so that a bus throwing at once is handled like one that rejects.
    const round = (async () => this.bus.displace({ tenant, user, policy, incoming: session.describe(this.options.gateway) }))();
    session.serveAfter(
      round.then(
        (outcome) => this.options.onDisplaced?.(outcome),
        (err: unknown) => {
          this.options.logger.error({ err, tenant, user }, 'displacement failed; the new login is served');
          this.options.onDisplaced?.('failed');
        },
      ),
    );
  }

  closed(session: ClientSession): void {
    const { tenant, user } = session.caller;
    const key = keyOf(tenant, user);
    const mine = this.byUser.get(key);
    if (mine === undefined || !mine.delete(session)) return;
    if (mine.size === 0) this.byUser.delete(key);
    this.bus.release(tenant, user);
  }

  /** Every live session here came before the login (see core's displacedSessions). */
  pick(request: DisplaceRequest): string[] {
    return displacedSessions(request.policy, this.list(request.tenant, request.user), request.incoming).map((d) => d.session);
  }

  kick(request: KickRequest): Displacement {
    const named = new Set(request.sessions);
    const here = [...(this.byUser.get(keyOf(request.tenant, request.user)) ?? [])].filter((s) => s.isLive && named.has(s.id));
    const { dev, plat } = request.incoming;
    const by = { ...(dev !== undefined ? { dev } : {}), ...(plat !== undefined ? { plat } : {}) };
    const kicks = here.map((s) => s.kick(by, this.options.drainMs));
    if (kicks.length > 0)
      this.options.logger.info(
        { tenant: request.tenant, user: request.user, displaced: kicks.length, by },
        'sessions displaced by a new login',
      );
    return { displaced: kicks.length, told: Promise.all(kicks).then(() => undefined) };
  }

  list(tenant: string, user: string): DeviceSession[] {
    return [...(this.byUser.get(keyOf(tenant, user)) ?? [])].filter((s) => s.isLive).map((s) => s.describe(this.options.gateway));
  }

  private policyOf(tenant: string): LoginPolicy {
    try {
      return this.options.loginPolicyOf(tenant);
    } catch (err) {
      // The settings are local reads; should one fail, keeping every session (policy `all`) is the safe side.
      this.options.logger.error({ err, tenant }, 'login policy unreadable; allowing all sessions');
      return 'all';
    }
  }
}

function keyOf(tenant: string, user: string): string {
  return `${tenant}:${user}`;
}
