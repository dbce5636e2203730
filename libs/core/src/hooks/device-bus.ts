/**
 * The device bus port: how a new login reaches the sessions of its user on every gateway
 * (docs/protocol.md, "Devices and the login policy"). Embedded, one gateway holds them all
 * (localDeviceBus); distributed, the gateways ask each other over core NATS (@seqline/bus).
 */
import type { DeviceSession, LoginPolicy } from './types.ts';

/** A new login: displace what `policy` says among the older sessions of `tenant:user`. */
export interface DisplaceRequest {
  tenant: string;
  user: string;
  /** The policy read by the gateway of the new login, applied by every gateway alike. */
  policy: LoginPolicy;
  incoming: DeviceSession;
}

/** What one gateway does with a displacement: how many of its sessions go, and when they were told. */
export interface Displacement {
  displaced: number;
  /** Resolves once every displaced session here received its `kicked` frame (or is gone). */
  told: Promise<void>;
}

/** The sessions one gateway holds, as the bus needs them (the gateway implements it). */
export interface DeviceHolder {
  displace(request: DisplaceRequest): Displacement;
  /** The live sessions of a user here (a session being kicked is no longer live). */
  list(tenant: string, user: string): DeviceSession[];
}

export interface DeviceBus {
  /** Starts answering for `tenant:user` here (the gateway opened a socket of theirs). Counted. */
  hold(tenant: string, user: string): void;
  /** Stops answering once every hold of `tenant:user` was released. */
  release(tenant: string, user: string): void;
  /** Resolves when every gateway told its displaced sessions, or at the bus's bound. Never rejects. */
  displace(request: DisplaceRequest): Promise<void>;
  /** The user's live sessions on every gateway that answered within the bus's bound. */
  list(tenant: string, user: string): Promise<DeviceSession[]>;
  close(): Promise<void>;
}

/** Builds a gateway's bus once the gateway (the holder of its sessions) exists. */
export type DeviceBusFactory = (holder: DeviceHolder) => DeviceBus;

/** One process holds every session: the bus is the holder itself. */
export function localDeviceBus(holder: DeviceHolder): DeviceBus {
  return {
    hold: () => undefined,
    release: () => undefined,
    displace: (request) => holder.displace(request).told,
    list: async (tenant, user) => holder.list(tenant, user),
    close: async () => undefined,
  };
}
