/**
 * The device bus over core NATS (docs/protocol.md, "Devices and the login policy"). A gateway
 * subscribes `<root>.<tenant>.<user>` (subject-safe tokens) while it holds a socket of that
 * user. A new login asks them all (request-many): each answers at once with how many of its
 * sessions it displaces and, when that is more than none, once more after they were told. The
 * asker waits until every gateway that is kicking said so and nothing came for `stallMs`, never
 * longer than `maxWaitMs`; no responders means nobody to kick. Listing works alike.
 */
import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection, QueuedIterator, Subscription } from '@nats-io/transport-node';
import {
  LOGIN_POLICIES,
  parseDevice,
  type DeviceBus,
  type DeviceHolder,
  type DeviceSession,
  type DisplaceRequest,
  type Logger,
} from '@seqline/core';
import { subjectToken } from './subject-token.ts';

export interface NatsDeviceBusOptions {
  /** Subject root, e.g. `<ns>.dev`. */
  root: string;
  logger: Logger;
  /** The longest a login or a listing waits for the gateways (default 1 000 ms). */
  maxWaitMs?: number;
  /** Answers are complete when none came for this long and no gateway is still kicking (default 50 ms). */
  stallMs?: number;
}

type Answer = Record<string, unknown>;

export function createNatsDeviceBus(nc: NatsConnection, holder: DeviceHolder, options: NatsDeviceBusOptions): DeviceBus {
  return new NatsDeviceBus(nc, holder, options);
}

class NatsDeviceBus implements DeviceBus {
  private readonly id = randomUUID();
  private readonly held = new Map<string, { sub: Subscription; holds: number }>();
  private readonly maxWaitMs: number;
  private readonly stallMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly holder: DeviceHolder,
    private readonly options: NatsDeviceBusOptions,
  ) {
    this.maxWaitMs = options.maxWaitMs ?? 1000;
    this.stallMs = options.stallMs ?? 50;
  }

  hold(tenant: string, user: string): void {
    const subject = this.subjectOf(tenant, user);
    const entry = this.held.get(subject);
    if (entry !== undefined) return void entry.holds++;
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err === null) this.answer(tenant, user, msg);
      },
    });
    this.held.set(subject, { sub, holds: 1 });
  }

  release(tenant: string, user: string): void {
    const subject = this.subjectOf(tenant, user);
    const entry = this.held.get(subject);
    if (entry === undefined || --entry.holds > 0) return;
    this.held.delete(subject);
    entry.sub.unsubscribe();
  }

  async displace(request: DisplaceRequest): Promise<void> {
    const kicking = new Set<string>();
    await this.gather(this.subjectOf(request.tenant, request.user), { op: 'displace', ...request }, (answer) => {
      const from = typeof answer['from'] === 'string' ? answer['from'] : '';
      if (typeof answer['displaced'] === 'number' && answer['displaced'] > 0) kicking.add(from);
      if (answer['done'] === true) kicking.delete(from);
      return kicking.size > 0;
    });
  }

  async list(tenant: string, user: string): Promise<DeviceSession[]> {
    const sessions: DeviceSession[] = [];
    await this.gather(this.subjectOf(tenant, user), { op: 'list', tenant, user }, (answer) => {
      if (Array.isArray(answer['sessions'])) for (const s of answer['sessions'] as unknown[]) if (isDeviceSession(s)) sessions.push(s);
      return false;
    });
    return sessions.sort((a, b) => a.since - b.since || (a.session < b.session ? -1 : 1));
  }

  async close(): Promise<void> {
    for (const { sub } of this.held.values()) sub.unsubscribe();
    this.held.clear();
  }

  private subjectOf(tenant: string, user: string): string {
    return `${this.options.root}.${subjectToken(tenant)}.${subjectToken(user)}`;
  }

  /** Serves another gateway's (or our own) login or listing for a user this gateway holds. */
  private answer(tenant: string, user: string, msg: Msg): void {
    const reply = (body: Answer) => {
      try {
        msg.respond(JSON.stringify({ from: this.id, ...body }));
      } catch (err) {
        this.options.logger.warn({ err }, 'device bus answer not sent');
      }
    };
    const request = parseRequest(msg, tenant, user);
    if (request === null) return this.options.logger.warn({ subject: msg.subject }, 'device bus: malformed request ignored');
    if (request.op === 'list') return reply({ sessions: this.holder.list(tenant, user) });
    const { displaced, told } = this.holder.displace(request.displace);
    reply({ displaced });
    if (displaced > 0) void told.then(() => reply({ done: true }));
  }

  /**
   * Request-many on `subject`; `handle` returns true while some gateway is still busy. Resolves
   * when no answer came for stallMs and none is busy, at maxWaitMs, or at once without responders.
   */
  private async gather(subject: string, body: object, handle: (answer: Answer) => boolean): Promise<void> {
    let answers: QueuedIterator<Msg>;
    try {
      answers = (await this.nc.requestMany(subject, JSON.stringify(body), {
        strategy: 'timer',
        maxWait: this.maxWaitMs,
      })) as QueuedIterator<Msg>;
    } catch (err) {
      this.options.logger.warn({ err, subject }, 'device bus request failed');
      return;
    }
    await new Promise<void>((resolve) => {
      let busy = false;
      let stall: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(stall);
        answers.stop();
        resolve();
      };
      const armStall = () => {
        clearTimeout(stall);
        stall = setTimeout(() => !busy && finish(), this.stallMs);
      };
      void (async () => {
        try {
          for await (const msg of answers) {
            busy = handle(parseAnswer(msg));
            armStall();
          }
        } catch {
          // No responders (nobody holds the user), or the connection closed: nothing more to wait for.
        }
        finish();
      })();
    });
  }
}

function parseAnswer(msg: Msg): Answer {
  try {
    const value: unknown = msg.json();
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Answer) : {};
  } catch {
    return {};
  }
}

type ParsedRequest = { op: 'list' } | { op: 'displace'; displace: DisplaceRequest };

/** A request for this very subject's user, well formed; anything else is ignored (never answered). */
function parseRequest(msg: Msg, tenant: string, user: string): ParsedRequest | null {
  const body = parseAnswer(msg);
  if (body['tenant'] !== tenant || body['user'] !== user) return null;
  if (body['op'] === 'list') return { op: 'list' };
  const policy = LOGIN_POLICIES.find((p) => p === body['policy']);
  if (body['op'] !== 'displace' || policy === undefined || !isDeviceSession(body['incoming'])) return null;
  return { op: 'displace', displace: { tenant, user, policy, incoming: body['incoming'] } };
}

function isDeviceSession(value: unknown): value is DeviceSession {
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
