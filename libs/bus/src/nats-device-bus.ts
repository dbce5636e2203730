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
 * What no transport changes (picking, kicking, the crossing rule) is device-peer.ts's.
 */
import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  DISPLACE_MAX_WAIT_MS,
  type DeviceBus,
  type DeviceHolder,
  type DeviceSession,
  type DisplaceOutcome,
  type DisplaceRequest,
  type Logger,
} from '@seqline/core';
import { DevicePeer } from './device-peer.ts';
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
  private readonly peer: DevicePeer;
  private readonly answerWaitMs: number;
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
    const maxWaitMs = options.maxWaitMs ?? DISPLACE_MAX_WAIT_MS;
    this.peer = new DevicePeer({ holder, logger: options.logger, answerWaitMs: this.answerWaitMs, maxWaitMs });
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
    this.peer.released(key);
    try {
      entry.sub?.unsubscribe();
      this.announcer?.set(key, false);
    } catch (err) {
      this.options.logger.warn({ err, tenant, user }, 'device bus: release not announced');
    }
  }

  displace(request: DisplaceRequest): Promise<DisplaceOutcome> {
    if (this.closed) return this.peer.displaceHere(request);
    const key = keyOf(request.tenant, request.user);
    this.follow();
    const expected = this.othersHolding(key);
    return this.peer.displace(key, request, (ctx) =>
      startRound(
        {
          ...ctx,
          nc: this.nc,
          self: this.id,
          userSubject: this.userSubjectOf(key),
          kickSubjectOf: (bus) => this.kickSubjectOf(bus),
          expected,
        },
        request,
      ),
    );
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
    return this.peer.list(tenant, user, others);
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
    this.peer.close();
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

  /** Another gateway's login or listing, for a user this gateway holds. */
  private onUserRequest(tenant: string, user: string, msg: Msg): void {
    const request = parseUserRequest(msg, tenant, user);
    if (request === null) return this.options.logger.warn({ subject: msg.subject }, 'device bus: malformed request ignored');
    if (request.from === this.id) return; // this gateway's own login: its sessions were displaced already
    if (request.op === 'list') return this.respond(msg, { step: 'listed', from: this.id, sessions: this.holder.list(tenant, user) });
    this.respond(msg, { step: 'picked', from: this.id, sessions: this.peer.pick(request.displace) });
  }

  /** The second step: kick what this gateway picked, unless the kicks crossed. */
  private onKick(msg: Msg): void {
    const parsed = parseKick(msg);
    if (parsed === null) return this.options.logger.warn({ subject: msg.subject }, 'device bus: malformed kick ignored');
    const { tenant, user } = parsed.kick;
    const { displaced, failed } = this.peer.kick(keyOf(tenant, user), parsed.kick);
    void failed.then((notTold) => this.respond(msg, { step: 'told', from: this.id, displaced, failed: notTold }));
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
