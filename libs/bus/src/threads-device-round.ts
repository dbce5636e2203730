/**
 * One login's displacement across the threads of a process (threads-device-bus.ts), the same two
 * steps as over NATS (nats-device-round.ts): this thread's own sessions first, with no message;
 * then every other thread that may hold the user picks, and is asked to kick what it picked while
 * the login is still live. Ports lose nothing, so the login waits for every thread it asked, by
 * count, within its bounds; a thread gone meanwhile took its sessions with it and counts as told.
 */
import { displaceHere, withinBound, type DeviceHolder, type DisplaceOutcome, type DisplaceRequest, type Logger } from '@seqline/core';
import type { ThreadChannel } from './threads-channel.ts';
import { ThreadUnavailableError } from './threads-frames.ts';

export interface ThreadRoundContext {
  channel: ThreadChannel;
  logger: Logger;
  holder: DeviceHolder;
  /** The other threads to ask: those presence says hold the user, and those not known yet. */
  ask: readonly number[];
  /** How long the login waits for every asked thread to answer. */
  answerWaitMs: number;
  /** The longest the login waits in all; answers until then are still acted on. */
  maxWaitMs: number;
  /** Records that `login` asked to kick `sessions` (see core's sparedInCrossing). */
  asked(login: string, sessions: readonly string[]): void;
  /** The round stopped listening (everything answered, at maxWaitMs, or stopped). */
  onEnd(): void;
}

export interface ThreadRound {
  outcome: Promise<DisplaceOutcome>;
  /** Stops listening (the bus closes); the outcome settles at once. */
  readonly stop: () => void;
}

/** What a thread answers to a kick. */
export interface KickAnswer {
  displaced: number;
  failed: boolean;
}

const RANK: Record<DisplaceOutcome, number> = { told: 0, bound: 1, failed: 2 };
const worst = (a: DisplaceOutcome, b: DisplaceOutcome): DisplaceOutcome => (RANK[a] >= RANK[b] ? a : b);

export function startThreadRound(ctx: ThreadRoundContext, request: DisplaceRequest): ThreadRound {
  const here = withinBound(displaceHere(ctx.holder, request, ctx.logger), ctx.maxWaitMs).then((outcome) => {
    if (outcome === 'bound')
      ctx.logger.warn(
        { tenant: request.tenant, user: request.user, maxWaitMs: ctx.maxWaitMs },
        'displaced sessions here not told within the bound',
      );
    return outcome;
  }); // first: no message
  const others = askOthers(ctx, request);
  return { outcome: Promise.all([here, others.outcome]).then(([a, b]) => worst(a, b)), stop: others.stop };
}

function askOthers(ctx: ThreadRoundContext, request: DisplaceRequest): ThreadRound {
  const { tenant, user, incoming } = request;
  const log = ctx.logger.child({ tenant, user, login: incoming.session });
  const waiting = new Set(ctx.ask);
  const kicking = new Set<number>();
  let [answerWindowOver, failed, settled, stopped] = [false, false, false, false];
  let settle: (outcome: DisplaceOutcome) => void = () => undefined;
  const outcome = new Promise<DisplaceOutcome>((resolve) => (settle = resolve));
  const finish = (result: DisplaceOutcome) => {
    if (settled) return;
    settled = true;
    settle(result);
  };
  /** A failure of a thread still there; one gone took its sessions with it. */
  const failedBy = (thread: number, err: unknown, what: string) => {
    if (err instanceof ThreadUnavailableError) return log.info({ thread }, `${what}: the thread is gone, and its sessions with it`);
    failed = true;
    log.warn({ err, thread }, `${what} failed`);
  };

  const check = () => {
    if (waiting.size === 0 && kicking.size === 0) stop(false);
    if (settled || kicking.size > 0) return;
    if (waiting.size === 0) return finish(failed ? 'failed' : 'told');
    if (!answerWindowOver) return;
    log.warn({ missing: [...waiting], answerWaitMs: ctx.answerWaitMs }, 'login served before every thread answered (bound)');
    finish('bound');
  };

  const sendKick = (thread: number, sessions: string[]) => {
    // A login displaced meanwhile displaces nobody: of two racing logins one stays.
    if (!ctx.holder.list(tenant, user).some((s) => s.session === incoming.session))
      return log.debug({ thread, sessions: sessions.length }, 'login no longer live: nothing kicked');
    ctx.asked(incoming.session, sessions);
    kicking.add(thread);
    ctx.channel.request(thread, { op: 'kick', kick: { tenant, user, incoming, sessions } }).then(
      (answer) => {
        kicking.delete(thread);
        if ((answer as KickAnswer | null)?.failed !== false) failed = true;
        check();
      },
      (err: unknown) => {
        kicking.delete(thread);
        failedBy(thread, err, 'kick');
        check();
      },
    );
  };

  for (const thread of ctx.ask) {
    ctx.channel.request(thread, { op: 'pick', displace: request }).then(
      (sessions) => {
        if (stopped) return;
        waiting.delete(thread);
        if (isIds(sessions) && sessions.length > 0) {
          if (settled) log.info({ thread }, 'late answer: kicked after the login was served');
          sendKick(thread, sessions);
        }
        check();
      },
      (err: unknown) => {
        if (stopped) return;
        waiting.delete(thread);
        failedBy(thread, err, 'pick');
        check();
      },
    );
  }

  const answerTimer = setTimeout(() => {
    answerWindowOver = true;
    check();
  }, ctx.answerWaitMs);
  const maxTimer = setTimeout(() => stop(true), ctx.maxWaitMs);
  /** `bounded`: the round ends before everything was answered (maxWaitMs, or the bus closing). */
  function stop(bounded: boolean): void {
    if (stopped) return;
    stopped = true;
    clearTimeout(answerTimer);
    clearTimeout(maxTimer);
    ctx.onEnd();
    if (bounded && !settled)
      log.warn(
        { missing: [...waiting], kicking: [...kicking], maxWaitMs: ctx.maxWaitMs },
        'login served before every displaced session was told (bound)',
      );
    if (bounded) finish('bound');
  }
  check(); // nobody else may hold the user: served at once
  return { outcome, stop: () => stop(true) };
}

function isIds(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((s) => typeof s === 'string');
}
