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
  type DisplaceRequest,
  type Displacement,
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
}

export class GatewayDevices implements DeviceHolder {
  private readonly byUser = new Map<string, Set<ClientSession>>();
  readonly bus: DeviceBus;

  constructor(private readonly options: GatewayDevicesOptions) {
    this.bus = (options.bus ?? localDeviceBus)(this);
  }

  /**
   * Registers a new socket and displaces what the tenant's policy says, on every gateway; the
   * socket serves no request before every displaced session was told.
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
    session.holdUntil(this.bus.displace({ tenant, user, policy, incoming: session.describe(this.options.gateway) }));
  }

  closed(session: ClientSession): void {
    const { tenant, user } = session.caller;
    const key = keyOf(tenant, user);
    const mine = this.byUser.get(key);
    if (mine === undefined || !mine.delete(session)) return;
    if (mine.size === 0) this.byUser.delete(key);
    this.bus.release(tenant, user);
  }

  displace(request: DisplaceRequest): Displacement {
    const here = [...(this.byUser.get(keyOf(request.tenant, request.user)) ?? [])].filter((s) => s.isLive);
    const described = here.map((s) => s.describe(this.options.gateway));
    const doomed = new Set(displacedSessions(request.policy, described, request.incoming).map((d) => d.session));
    const { dev, plat } = request.incoming;
    const by = { ...(dev !== undefined ? { dev } : {}), ...(plat !== undefined ? { plat } : {}) };
    const kicks = here.filter((s) => doomed.has(s.id)).map((s) => s.kick(by, this.options.drainMs));
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
      // The settings are local reads; should one fail, the v1 behaviour (keep every session) is the safe side.
      this.options.logger.error({ err, tenant }, 'login policy unreadable; allowing all sessions');
      return 'all';
    }
  }
}

function keyOf(tenant: string, user: string): string {
  return `${tenant}:${user}`;
}
