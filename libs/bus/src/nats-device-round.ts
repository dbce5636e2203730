/**
 * One login's displacement, as its gateway runs it over the device bus (nats-device-bus.ts):
 * its own sessions first, with no network; then every other gateway holding the user picks,
 * and is asked to kick what it picked while the login is still live. The login waits until
 * every gateway that presence says holds the user answered and each one asked told its
 * sessions, or its bounds (docs/protocol.md, "Devices and the login policy").
 */
import { createInbox, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { displaceHere, withinBound, type DeviceHolder, type DisplaceOutcome, type DisplaceRequest, type Logger } from '@seqline/core';
import { parseReply } from './nats-device-messages.ts';

export interface RoundContext {
  nc: NatsConnection;
  logger: Logger;
  /** This bus's id: its presence id and `from` of what it sends. */
  self: string;
  holder: DeviceHolder;
  userSubject: string;
  kickSubjectOf(bus: string): string;
  /** The other buses that hold the user, as presence says; undefined while it cannot be trusted. */
  expected: ReadonlySet<string> | undefined;
  /** How long the login waits for the answers of gateways (all of them when `expected` is unknown). */
  answerWaitMs: number;
  /** The longest the login waits in all; answers until then are still acted on. */
  maxWaitMs: number;
  /** Records that `login` asked to kick `sessions` (see core's sparedInCrossing). */
  asked(login: string, sessions: readonly string[]): void;
  /** The round stopped listening (at maxWaitMs, or stopped). */
  onEnd(): void;
}

export interface Round {
  outcome: Promise<DisplaceOutcome>;
  /** Stops listening (the bus closes); the outcome settles at once. */
  readonly stop: () => void;
}

const RANK: Record<DisplaceOutcome, number> = { told: 0, bound: 1, failed: 2 };
const worst = (a: DisplaceOutcome, b: DisplaceOutcome): DisplaceOutcome => (RANK[a] >= RANK[b] ? a : b);

export function startRound(ctx: RoundContext, request: DisplaceRequest): Round {
  const here = withinBound(displaceHere(ctx.holder, request, ctx.logger), ctx.maxWaitMs); // first: no network
  const others = askOthers(ctx, request);
  return {
    outcome: Promise.all([here, others.outcome]).then(([a, b]) => worst(a, b)),
    stop: others.stop,
  };
}

function askOthers(ctx: RoundContext, request: DisplaceRequest): Round {
  const { tenant, user, incoming } = request;
  const log = ctx.logger.child({ tenant, user, login: incoming.session });
  const answered = new Set<string>();
  const kicking = new Set<string>();
  let answerWindowOver = false;
  let failed = false;
  let settle: (outcome: DisplaceOutcome) => void = () => undefined;
  let settled = false;
  const outcome = new Promise<DisplaceOutcome>((resolve) => (settle = resolve));
  const finish = (result: DisplaceOutcome) => {
    if (settled) return;
    settled = true;
    settle(result);
  };
  const missing = () => [...(ctx.expected ?? [])].filter((bus) => !answered.has(bus));
  const inbox = createInbox();
  let sub: Subscription | undefined;

  const check = () => {
    if (settled || kicking.size > 0) return;
    const allAnswered = ctx.expected !== undefined && missing().length === 0;
    if (!allAnswered && !answerWindowOver) return;
    if (!allAnswered && ctx.expected !== undefined) {
      log.warn({ missing: missing(), answerWaitMs: ctx.answerWaitMs }, 'login served before every gateway answered (bound)');
      return finish('bound');
    }
    finish(failed ? 'failed' : 'told');
  };

  const sendKick = (bus: string, sessions: string[]) => {
    // A login displaced meanwhile displaces nobody: of two racing logins one stays.
    if (!ctx.holder.list(tenant, user).some((s) => s.session === incoming.session)) {
      return log.debug({ bus, sessions: sessions.length }, 'login no longer live: nothing kicked');
    }
    ctx.asked(incoming.session, sessions);
    kicking.add(bus);
    try {
      ctx.nc.publish(ctx.kickSubjectOf(bus), JSON.stringify({ from: ctx.self, tenant, user, incoming, sessions }), { reply: inbox });
    } catch (err) {
      kicking.delete(bus);
      failed = true;
      log.warn({ err, bus }, 'kick not sent');
    }
  };

  try {
    sub = ctx.nc.subscribe(inbox, {
      callback: (err, msg) => {
        const reply = err === null ? parseReply(msg) : null;
        if (reply === null || reply.from === ctx.self) return;
        if (reply.step === 'picked') {
          if (answered.has(reply.from)) return; // a replayed answer asks nothing twice
          answered.add(reply.from);
          if (reply.sessions.length > 0) sendKick(reply.from, reply.sessions);
          if (settled && reply.sessions.length > 0) log.info({ bus: reply.from }, 'late answer: kicked after the login was served');
        } else if (reply.step === 'told') {
          kicking.delete(reply.from);
          if (reply.failed) failed = true;
        }
        check();
      },
    });
    ctx.nc.publish(ctx.userSubject, JSON.stringify({ op: 'pick', from: ctx.self, ...request }), { reply: inbox });
  } catch (err) {
    try {
      sub?.unsubscribe();
    } catch {
      // The connection is gone: so is the subscription.
    }
    log.warn({ err }, 'device bus unreachable: only the sessions on this gateway were displaced');
    ctx.onEnd();
    return { outcome: Promise.resolve('failed'), stop: () => undefined };
  }

  const answerTimer = setTimeout(() => {
    answerWindowOver = true;
    check();
  }, ctx.answerWaitMs);
  // Until then late answers are still acted on (kicked), though no longer waited for.
  const maxTimer = setTimeout(() => stop(), ctx.maxWaitMs);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(answerTimer);
    clearTimeout(maxTimer);
    sub?.unsubscribe();
    ctx.onEnd();
    if (!settled)
      log.warn(
        { missing: missing(), kicking: [...kicking], maxWaitMs: ctx.maxWaitMs },
        'login served before every displaced session was told (bound)',
      );
    finish('bound');
  };
  check(); // nobody else holds the user: served at once
  return { outcome, stop };
}
