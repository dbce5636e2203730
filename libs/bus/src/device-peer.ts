/**
 * What a device bus does whatever carries its messages (NATS in nats-device-bus.ts, thread ports
 * in threads-device-bus.ts): it picks and kicks for the logins of its peers, remembers what its
 * own logins asked them to kick (two kicks that crossed spare one side: core's sparedInCrossing),
 * runs its own logins' rounds (device-round.ts) until they end or the bus closes, and merges
 * listings.
 */
import {
  displaceHere,
  sparedInCrossing,
  withinBound,
  type DeviceSession,
  type DisplaceOutcome,
  type DisplaceRequest,
  type KickRequest,
} from '@seqline/core';
import type { DeviceRound, DeviceRoundContext } from './device-round.ts';

/** What a peer did with a kick: how many sessions went; `failed` settles once they were told. */
export interface PeerKick {
  displaced: number;
  /** True when the holder threw or a displaced session was not told (logged). */
  failed: Promise<boolean>;
}

/** The bus's holder, logger and bounds: what each round of its logins is run with. */
export type DevicePeerOptions = Omit<DeviceRoundContext, 'asked' | 'onEnd'>;

export class DevicePeer {
  /** By user key: the sessions each login of this bus asked other peers to kick. */
  private readonly asked = new Map<string, Map<string, Set<string>>>();
  private readonly rounds = new Set<{ stop(): void }>();

  constructor(private readonly options: DevicePeerOptions) {}

  /** The first step for a peer's login: what this bus picks; nothing when the holder throws (logged). */
  pick(request: DisplaceRequest): string[] {
    try {
      return this.options.holder.pick(request);
    } catch (err) {
      this.options.logger.error({ err, tenant: request.tenant, user: request.user }, 'device bus: picking sessions failed');
      return [];
    }
  }

  /** The second step: kick what this bus picked for `key`'s user, unless the kicks crossed. */
  kick(key: string, request: KickRequest): PeerKick {
    const { tenant, user, incoming } = request;
    const { holder, logger } = this.options;
    const mine = this.asked.get(key);
    const sessions = request.sessions.filter((s) => !sparedInCrossing(s, incoming.session, mine?.get(s)));
    if (sessions.length < request.sessions.length)
      logger.info({ tenant, user, login: incoming.session }, 'two logins crossed: the one with the greater session id stays');
    try {
      const { displaced, told } = holder.kick({ ...request, sessions });
      const failed = told.then(
        () => false,
        (err: unknown) => (logger.error({ err, tenant, user }, 'device bus: a displaced session was not told'), true),
      );
      return { displaced, failed };
    } catch (err) {
      logger.error({ err, tenant, user }, 'device bus: kicking sessions failed');
      return { displaced: 0, failed: Promise.resolve(true) };
    }
  }

  /** A login of this bus: `start` starts its round over the transport; close() stops it until it ends. */
  displace(key: string, request: DisplaceRequest, start: (ctx: DeviceRoundContext) => DeviceRound): Promise<DisplaceOutcome> {
    this.forgetGone(key, request.tenant, request.user);
    const listening = { stop: () => undefined as void };
    this.rounds.add(listening);
    const round = start({
      ...this.options,
      asked: (login, sessions) => this.record(key, login, sessions),
      onEnd: () => this.rounds.delete(listening),
    });
    listening.stop = round.stop;
    return round.outcome;
  }

  /** A login once the bus closed: this bus's own sessions only. */
  displaceHere(request: DisplaceRequest): Promise<DisplaceOutcome> {
    return withinBound(displaceHere(this.options.holder, request, this.options.logger), this.options.maxWaitMs);
  }

  /** This bus's live sessions of the user and those the others listed, oldest first. */
  list(tenant: string, user: string, others: readonly DeviceSession[]): DeviceSession[] {
    return [...this.options.holder.list(tenant, user), ...others].sort((a, b) => a.since - b.since || (a.session < b.session ? -1 : 1));
  }

  /** This bus holds the user no more: what its logins asked is of no use. */
  released(key: string): void {
    this.asked.delete(key);
  }

  /** The bus closes: every round ends at once (`bound` where not settled). */
  close(): void {
    for (const round of [...this.rounds]) round.stop();
  }

  private record(key: string, login: string, sessions: readonly string[]): void {
    let logins = this.asked.get(key);
    if (logins === undefined) this.asked.set(key, (logins = new Map<string, Set<string>>()));
    const targets = logins.get(login) ?? new Set<string>();
    for (const s of sessions) targets.add(s);
    logins.set(login, targets);
  }

  /** What gone logins asked is of no more use: only live sessions can be spared. */
  private forgetGone(key: string, tenant: string, user: string): void {
    const logins = this.asked.get(key);
    if (logins === undefined) return;
    const live = new Set(this.options.holder.list(tenant, user).map((s) => s.session));
    for (const login of logins.keys()) if (!live.has(login)) logins.delete(login);
  }
}
