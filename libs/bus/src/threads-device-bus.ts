/**
 * The device bus of a process running several threads, each holding sockets (docs/protocol.md,
 * "Devices and the login policy"): the NATS device bus's protocol (nats-device-bus.ts) over the
 * thread hub. A thread holding a user says so (presence, exact over ports); a login displaces
 * this thread's sessions first, then asks the threads that may hold the user to pick, and those
 * to kick what they picked (threads-device-round.ts). Listing asks them alike. What no transport
 * changes (picking, kicking, the crossing rule) is device-peer.ts's.
 */
import {
  BadRequestError,
  DISPLACE_MAX_WAIT_MS,
  LOGIN_POLICIES,
  withinBound,
  type DeviceBus,
  type DeviceHolder,
  type DeviceSession,
  type DisplaceOutcome,
  type DisplaceRequest,
  type KickRequest,
  type Logger,
} from '@seqline/core';
import { DevicePeer } from './device-peer.ts';
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
  const peer = new DevicePeer({ holder, logger, answerWaitMs, maxWaitMs });
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
    if (req.op === 'pick') return peer.pick(req.displace);
    return kick(req.kick);
  }

  /** The second step: kick what this thread picked, unless the kicks crossed. */
  async function kick(request: KickRequest): Promise<KickAnswer> {
    const { displaced, failed } = peer.kick(keyOf(request.tenant, request.user), request);
    // The asker stops waiting at the same bound: a session that never tells holds no answer open.
    return { displaced, failed: (await withinBound(failed, maxWaitMs)) === true };
  }

  function askable(key: string): number[] {
    const { holding, unknown } = presence.holders(key);
    return [...holding, ...unknown];
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
      peer.released(key);
      if (!closed) presence.set(key, false);
    },

    displace(request: DisplaceRequest): Promise<DisplaceOutcome> {
      if (closed) return peer.displaceHere(request);
      const key = keyOf(request.tenant, request.user);
      // Every live thread is asked, not only those presence says hold the user: a session another
      // thread opened a moment ago may not be in its presence message yet, and a login that did
      // not ask that thread would leave it signed in (one-per-platform).
      return peer.displace(key, request, (ctx) =>
        startThreadRound({ ...ctx, channel, ask: channel.live(), expect: askable(key) }, request),
      );
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
      return peer.list(tenant, user, answers.flat());
    },

    threadsHolding(tenant: string, user: string): number[] | undefined {
      const { holding, unknown } = presence.holders(keyOf(tenant, user));
      return unknown.length > 0 ? undefined : holding;
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      peer.close();
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
