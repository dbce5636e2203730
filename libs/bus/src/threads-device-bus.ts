/**
 * The device bus of a process running several threads, each holding sockets (docs/protocol.md,
 * "Devices and the login policy"): the NATS device bus's protocol (nats-device-bus.ts) over the
 * thread hub. A thread holding a user says so (presence, exact over ports); a login displaces
 * this thread's sessions first, then asks the threads that may hold the user to pick, and those
 * to kick what they picked (threads-device-round.ts). Listing asks them alike.
 */
import {
  BadRequestError,
  DISPLACE_MAX_WAIT_MS,
  displaceHere,
  LOGIN_POLICIES,
  sparedInCrossing,
  withinBound,
  type DeviceBus,
  type DeviceHolder,
  type DeviceSession,
  type DisplaceOutcome,
  type DisplaceRequest,
  type KickRequest,
  type Logger,
} from '@seqline/core';
import { isDeviceSession, MAX_KICK_SESSIONS } from './nats-device-messages.ts';
import type { ThreadChannel } from './threads-channel.ts';
import { startThreadRound, type KickAnswer } from './threads-device-round.ts';
import type { ThreadHub } from './threads-hub.ts';
import { ThreadPresence } from './threads-presence.ts';

export interface ThreadDeviceBusOptions {
  hub: ThreadHub;
  logger: Logger;
  /** How long a login or a listing waits for the other threads to answer (default 1 000 ms). */
  answerWaitMs?: number;
  /** The longest a login waits for its displaced sessions to be told (default 6 000 ms). */
  maxWaitMs?: number;
  /** Channel name on the hub. Default `devices`. */
  channel?: string;
}

export interface ThreadDeviceBus extends DeviceBus {
  /** The other threads presence says hold the user; undefined while a thread reachable is not known yet. */
  threadsHolding(tenant: string, user: string): number[] | undefined;
}

type Request = { op: 'pick'; displace: DisplaceRequest } | { op: 'kick'; kick: KickRequest } | { op: 'list'; tenant: string; user: string };

export function createThreadDeviceBus(holder: DeviceHolder, options: ThreadDeviceBusOptions): ThreadDeviceBus {
  const { logger } = options;
  const answerWaitMs = options.answerWaitMs ?? 1_000;
  const maxWaitMs = options.maxWaitMs ?? DISPLACE_MAX_WAIT_MS;
  const holds = new Map<string, number>();
  /** By user key: the sessions each login of this thread asked other threads to kick. */
  const asked = new Map<string, Map<string, Set<string>>>();
  const rounds = new Set<{ stop(): void }>();
  const presence = new ThreadPresence();
  let closed = false;

  const channel: ThreadChannel = options.hub.open(options.channel ?? 'devices', {
    onMessage: (body, from) => {
      if (!presence.receive(body, from)) logger.warn({ from }, 'device bus: malformed message ignored');
    },
    onRequest: (body) => serve(body),
    onJoined: (thread) => presence.joined(thread),
    onGone: (thread) => presence.gone(thread),
  });
  presence.attach(channel);

  /** Another thread's login or listing. */
  async function serve(body: unknown): Promise<unknown> {
    const req = parseRequest(body);
    if (req === undefined) throw new BadRequestError('malformed device bus request');
    if (req.op === 'list') return holder.list(req.tenant, req.user);
    if (req.op === 'pick') {
      try {
        return holder.pick(req.displace);
      } catch (err) {
        logger.error({ err, tenant: req.displace.tenant, user: req.displace.user }, 'device bus: picking sessions failed');
        return [];
      }
    }
    return kick(req.kick);
  }

  /** The second step: kick what this thread picked, unless the kicks crossed (sparedInCrossing). */
  async function kick(request: KickRequest): Promise<KickAnswer> {
    const { tenant, user, incoming } = request;
    const mine = asked.get(keyOf(tenant, user));
    const sessions = request.sessions.filter((s) => !sparedInCrossing(s, incoming.session, mine?.get(s)));
    if (sessions.length < request.sessions.length)
      logger.info({ tenant, user, login: incoming.session }, 'two logins crossed: the one with the greater session id stays');
    let displacement;
    try {
      displacement = holder.kick({ ...request, sessions });
    } catch (err) {
      logger.error({ err, tenant, user }, 'device bus: kicking sessions failed');
      return { displaced: 0, failed: true };
    }
    const told = displacement.told.then(
      () => false,
      (err: unknown) => {
        logger.error({ err, tenant, user }, 'device bus: a displaced session was not told');
        return true;
      },
    );
    // The asker stops waiting at the same bound: a session that never tells holds no answer open.
    const failed = await withinBound(told, maxWaitMs);
    return { displaced: displacement.displaced, failed: failed === true };
  }

  function askable(key: string): number[] {
    const { holding, unknown } = presence.holders(key);
    return [...holding, ...unknown];
  }

  function record(key: string, login: string, sessions: readonly string[]): void {
    let logins = asked.get(key);
    if (logins === undefined) asked.set(key, (logins = new Map<string, Set<string>>()));
    const targets = logins.get(login) ?? new Set<string>();
    for (const s of sessions) targets.add(s);
    logins.set(login, targets);
  }

  /** What gone logins asked is of no more use: only live sessions can be spared. */
  function forgetGone(tenant: string, user: string, key: string): void {
    const logins = asked.get(key);
    if (logins === undefined) return;
    const live = new Set(holder.list(tenant, user).map((s) => s.session));
    for (const login of logins.keys()) if (!live.has(login)) logins.delete(login);
  }

  return {
    hold(tenant: string, user: string): void {
      const key = keyOf(tenant, user);
      const n = holds.get(key) ?? 0;
      holds.set(key, n + 1);
      if (n === 0 && !closed) presence.set(key, true);
    },

    release(tenant: string, user: string): void {
      const key = keyOf(tenant, user);
      const n = holds.get(key);
      if (n === undefined) return;
      if (n > 1) return void holds.set(key, n - 1);
      holds.delete(key);
      asked.delete(key);
      if (!closed) presence.set(key, false);
    },

    displace(request: DisplaceRequest): Promise<DisplaceOutcome> {
      if (closed) return withinBound(displaceHere(holder, request, logger), maxWaitMs);
      const key = keyOf(request.tenant, request.user);
      forgetGone(request.tenant, request.user, key);
      const listening = { stop: () => undefined as void };
      rounds.add(listening);
      const round = startThreadRound(
        {
          channel,
          logger,
          holder,
          ask: askable(key),
          answerWaitMs,
          maxWaitMs,
          asked: (login, sessions) => record(key, login, sessions),
          onEnd: () => rounds.delete(listening),
        },
        request,
      );
      listening.stop = round.stop;
      return round.outcome;
    },

    async list(tenant: string, user: string): Promise<DeviceSession[]> {
      const ask = closed ? [] : askable(keyOf(tenant, user));
      const answers = await Promise.all(
        ask.map(async (thread) => {
          const listed = await withinBound(channel.request(thread, { op: 'list', tenant, user } satisfies Request), answerWaitMs).catch(
            (err: unknown) => (logger.info({ err, thread }, 'device bus: a thread did not list'), []),
          );
          return Array.isArray(listed) ? listed.filter(isDeviceSession) : [];
        }),
      );
      return [...holder.list(tenant, user), ...answers.flat()].sort((a, b) => a.since - b.since || (a.session < b.session ? -1 : 1));
    },

    threadsHolding(tenant: string, user: string): number[] | undefined {
      const { holding, unknown } = presence.holders(keyOf(tenant, user));
      return unknown.length > 0 ? undefined : holding;
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const round of [...rounds]) round.stop();
      for (const key of holds.keys()) presence.set(key, false);
      holds.clear();
      presence.flush();
      await channel.close();
    },
  };
}

/** Injective: a tenant or user may hold any character. */
function keyOf(tenant: string, user: string): string {
  return JSON.stringify([tenant, user]);
}

function parseRequest(body: unknown): Request | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const req = body as Record<string, unknown>;
  if (req['op'] === 'list') return typeof req['tenant'] === 'string' && typeof req['user'] === 'string' ? (body as Request) : undefined;
  if (req['op'] === 'pick') {
    const d = req['displace'] as Record<string, unknown> | null;
    const ok = typeof d === 'object' && d !== null && typeof d['tenant'] === 'string' && typeof d['user'] === 'string';
    return ok && LOGIN_POLICIES.some((p) => p === d['policy']) && isDeviceSession(d['incoming']) ? (body as Request) : undefined;
  }
  const k = req['kick'] as Record<string, unknown> | null;
  if (req['op'] !== 'kick' || typeof k !== 'object' || k === null) return undefined;
  const sessions = k['sessions'];
  const ids = Array.isArray(sessions) && sessions.length <= MAX_KICK_SESSIONS && sessions.every((s) => typeof s === 'string');
  return ids && typeof k['tenant'] === 'string' && typeof k['user'] === 'string' && isDeviceSession(k['incoming'])
    ? (body as Request)
    : undefined;
}
