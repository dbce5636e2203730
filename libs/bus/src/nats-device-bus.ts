/**
 * The device bus over core NATS (docs/protocol.md, "Devices and the login policy").
 *
 * - While it holds a socket of a user, a gateway subscribes `<root>.<tenant>.<user>`
 *   (subject-safe tokens) and announces that it holds the user on `<root>.p` (presence,
 *   nats-presence.ts); it takes kicks on its own `<root>.gw.<id>.kick`.
 * - A login displaces the sessions of its own gateway first, then asks the user's subject: each
 *   other gateway answers with the sessions it picks, and is then asked to kick them while the
 *   login is still live (nats-device-round.ts). The login waits for the gateways presence
 *   names, by count, within its bounds.
 * - Listing asks the user's subject alike; this gateway's own sessions need no network.
 */
import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  DISPLACE_MAX_WAIT_MS,
  displaceHere,
  sparedInCrossing,
  withinBound,
  type DeviceBus,
  type DeviceHolder,
  type DeviceSession,
  type DisplaceOutcome,
  type DisplaceRequest,
  type Displacement,
  type Logger,
} from '@seqline/core';
import { gatherList } from './nats-device-list.ts';
import { parseKick, parseUserRequest, type Reply } from './nats-device-messages.ts';
import { startRound } from './nats-device-round.ts';
import { PresenceAnnouncer, PresenceDirectory } from './nats-presence.ts';
import { subjectToken } from './subject-token.ts';

export interface NatsDeviceBusOptions {
  /** Subject root, e.g. `<ns>.dev`. */
  root: string;
  logger: Logger;
  /** How long a login or a listing waits for the other gateways to answer (default 1 000 ms). */
  answerWaitMs?: number;
  /** The longest a login waits for its displaced sessions to be told (default 6 000 ms). */
  maxWaitMs?: number;
  /** How often a gateway holding users says so (presence; default 1 000 ms). */
  presenceHeartbeatMs?: number;
  /**
   * Follow presence from creation. Otherwise from the first login that displaces or the first
   * listing: a gateway whose tenants all keep the policy `all` never keeps the table.
   */
  followPresence?: boolean;
}

export interface NatsDeviceBus extends DeviceBus {
  /** This gateway's id on the bus and in presence. */
  readonly id: string;
  /** What presence says now, once followed: whether it is trusted, and the gateways it knows. */
  stats(): { presence?: { ready: boolean; gateways: number; inboxes: number } };
  /** The other gateways presence says hold the user; undefined while it is not trusted (or not followed). */
  gatewaysHolding(tenant: string, user: string): string[] | undefined;
}

export function createNatsDeviceBus(nc: NatsConnection, holder: DeviceHolder, options: NatsDeviceBusOptions): NatsDeviceBus {
  return new NatsDeviceBusImpl(nc, holder, options);
}

interface Held {
  holds: number;
  sub?: Subscription;
}

class NatsDeviceBusImpl implements NatsDeviceBus {
  readonly id = randomUUID().replaceAll('-', '');
  private readonly held = new Map<string, Held>();
  /** By user key: the sessions each login of this gateway asked other gateways to kick. */
  private readonly asked = new Map<string, Map<string, Set<string>>>();
  private readonly rounds = new Set<{ stop(): void }>();
  private readonly answerWaitMs: number;
  private readonly maxWaitMs: number;
  private readonly presence: { root: string; heartbeatMs: number; logger: Logger };
  private announcer: PresenceAnnouncer | undefined;
  private directory: PresenceDirectory | undefined;
  private kickSub: Subscription | undefined;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly holder: DeviceHolder,
    private readonly options: NatsDeviceBusOptions,
  ) {
    this.answerWaitMs = options.answerWaitMs ?? 1_000;
    this.maxWaitMs = options.maxWaitMs ?? DISPLACE_MAX_WAIT_MS;
    this.presence = { root: `${options.root}.p`, heartbeatMs: options.presenceHeartbeatMs ?? 1_000, logger: options.logger };
    if (options.followPresence) this.follow();
  }

  hold(tenant: string, user: string): void {
    const key = keyOf(tenant, user);
    const entry = this.held.get(key);
    if (entry !== undefined) return void entry.holds++;
    const held: Held = { holds: 1 };
    this.held.set(key, held);
    if (this.closed) return;
    try {
      this.kickSub ??= this.nc.subscribe(this.kickSubjectOf(this.id), {
        callback: (err, msg) => {
          if (err === null) this.onKick(msg);
        },
      });
      // Subscribed before it is announced: whoever sees the announcement reaches the subscription.
      held.sub = this.nc.subscribe(this.userSubjectOf(key), {
        callback: (err, msg) => {
          if (err === null) this.onUserRequest(tenant, user, msg);
        },
      });
      this.announcer ??= new PresenceAnnouncer(this.nc, this.presence, this.id);
      this.announcer.set(key, true);
    } catch (err) {
      this.options.logger.warn({ err, tenant, user }, 'device bus: this gateway cannot answer for the user (NATS unavailable)');
    }
  }

  release(tenant: string, user: string): void {
    const key = keyOf(tenant, user);
    const entry = this.held.get(key);
    if (entry === undefined || --entry.holds > 0) return;
    this.held.delete(key);
    this.asked.delete(key);
    try {
      entry.sub?.unsubscribe();
      this.announcer?.set(key, false);
    } catch (err) {
      this.options.logger.warn({ err, tenant, user }, 'device bus: release not announced');
    }
  }

  displace(request: DisplaceRequest): Promise<DisplaceOutcome> {
    if (this.closed) return withinBound(displaceHere(this.holder, request, this.options.logger), this.maxWaitMs);
    const key = keyOf(request.tenant, request.user);
    this.follow();
    this.forgetGone(request.tenant, request.user, key);
    const listening = { stop: () => undefined as void };
    this.rounds.add(listening);
    const round = startRound(
      {
        nc: this.nc,
        logger: this.options.logger,
        self: this.id,
        holder: this.holder,
        userSubject: this.userSubjectOf(key),
        kickSubjectOf: (bus) => this.kickSubjectOf(bus),
        expected: this.othersHolding(key),
        answerWaitMs: this.answerWaitMs,
        maxWaitMs: this.maxWaitMs,
        asked: (login, sessions) => this.record(key, login, sessions),
        onEnd: () => this.rounds.delete(listening),
      },
      request,
    );
    listening.stop = round.stop;
    return round.outcome;
  }

  async list(tenant: string, user: string): Promise<DeviceSession[]> {
    const key = keyOf(tenant, user);
    this.follow();
    const others = this.closed
      ? []
      : await gatherList({
          nc: this.nc,
          logger: this.options.logger,
          self: this.id,
          subject: this.userSubjectOf(key),
          body: { op: 'list', from: this.id, tenant, user },
          expected: this.othersHolding(key),
          waitMs: this.answerWaitMs,
        });
    return [...this.holder.list(tenant, user), ...others].sort((a, b) => a.since - b.since || (a.session < b.session ? -1 : 1));
  }

  gatewaysHolding(tenant: string, user: string): string[] | undefined {
    const others = this.othersHolding(keyOf(tenant, user));
    return others && [...others];
  }

  stats(): ReturnType<NatsDeviceBus['stats']> {
    return this.directory ? { presence: this.directory.stats() } : {};
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const round of [...this.rounds]) round.stop();
    try {
      for (const { sub } of this.held.values()) sub?.unsubscribe();
      this.kickSub?.unsubscribe();
      this.announcer?.close();
      this.directory?.close();
    } catch (err) {
      this.options.logger.warn({ err }, 'device bus: closed with NATS unavailable');
    }
    this.held.clear();
  }

  private follow(): void {
    if (this.directory !== undefined || this.closed) return;
    try {
      this.directory = new PresenceDirectory(this.nc, this.presence);
    } catch (err) {
      this.options.logger.warn({ err }, 'device bus: presence not followed (NATS unavailable)');
    }
  }

  /** The other gateways holding the user, or undefined while presence cannot be trusted. */
  private othersHolding(key: string): Set<string> | undefined {
    const routes = this.directory?.route([key]);
    if (routes === undefined) return undefined;
    routes.delete(this.id);
    return new Set(routes.keys());
  }

  private record(key: string, login: string, sessions: readonly string[]): void {
    let logins = this.asked.get(key);
    if (logins === undefined) this.asked.set(key, (logins = new Map<string, Set<string>>()));
    const targets = logins.get(login) ?? new Set<string>();
    for (const s of sessions) targets.add(s);
    logins.set(login, targets);
  }

  /** What gone logins asked is of no more use: only live sessions can be spared. */
  private forgetGone(tenant: string, user: string, key: string): void {
    const logins = this.asked.get(key);
    if (logins === undefined) return;
    const live = new Set(this.holder.list(tenant, user).map((s) => s.session));
    for (const login of logins.keys()) if (!live.has(login)) logins.delete(login);
  }

  /** Another gateway's login or listing, for a user this gateway holds. */
  private onUserRequest(tenant: string, user: string, msg: Msg): void {
    const request = parseUserRequest(msg, tenant, user);
    if (request === null) return this.options.logger.warn({ subject: msg.subject }, 'device bus: malformed request ignored');
    if (request.from === this.id) return; // this gateway's own login: its sessions were displaced already
    if (request.op === 'list') return this.respond(msg, { step: 'listed', from: this.id, sessions: this.holder.list(tenant, user) });
    let sessions: string[] = [];
    try {
      sessions = this.holder.pick(request.displace);
    } catch (err) {
      this.options.logger.error({ err, tenant, user }, 'device bus: picking sessions failed');
    }
    this.respond(msg, { step: 'picked', from: this.id, sessions });
  }

  /** The second step: kick what this gateway picked, unless the kicks crossed (sparedInCrossing). */
  private onKick(msg: Msg): void {
    const parsed = parseKick(msg);
    if (parsed === null) return this.options.logger.warn({ subject: msg.subject }, 'device bus: malformed kick ignored');
    const { tenant, user, incoming } = parsed.kick;
    const asked = this.asked.get(keyOf(tenant, user));
    const sessions = parsed.kick.sessions.filter((s) => !sparedInCrossing(s, incoming.session, asked?.get(s)));
    if (sessions.length < parsed.kick.sessions.length)
      this.options.logger.info({ tenant, user, login: incoming.session }, 'two logins crossed: the one with the greater session id stays');
    const told = (displaced: number, failed: boolean) => this.respond(msg, { step: 'told', from: this.id, displaced, failed });
    let displacement: Displacement;
    try {
      displacement = this.holder.kick({ ...parsed.kick, sessions });
    } catch (err) {
      this.options.logger.error({ err, tenant, user }, 'device bus: kicking sessions failed');
      return told(0, true);
    }
    displacement.told.then(
      () => told(displacement.displaced, false),
      (err: unknown) => {
        this.options.logger.error({ err, tenant, user }, 'device bus: a displaced session was not told');
        told(displacement.displaced, true);
      },
    );
  }

  private respond(msg: Msg, reply: Reply): void {
    try {
      msg.respond(JSON.stringify(reply));
    } catch (err) {
      this.options.logger.warn({ err }, 'device bus answer not sent');
    }
  }

  private userSubjectOf(key: string): string {
    return `${this.options.root}.${key}`;
  }

  private kickSubjectOf(bus: string): string {
    return `${this.options.root}.gw.${bus}.kick`;
  }
}

/** `<tenant>.<user>` as subject tokens: the presence key and the tail of the user's subject. */
function keyOf(tenant: string, user: string): string {
  return `${subjectToken(tenant)}.${subjectToken(user)}`;
}
