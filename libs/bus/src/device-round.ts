/**
 * One login's displacement over a device bus, whatever carries its messages (NATS subjects in
 * nats-device-round.ts, thread ports in threads-device-round.ts): this bus's own sessions first,
 * with no message; then every peer (gateway or thread) that may hold the user picks, and is asked
 * to kick what it picked while the login is still live. The login waits until every expected
 * peer answered and each one asked told its sessions, or its bounds (docs/protocol.md, "Devices
 * and the login policy").
 */
import {
  displaceHere,
  withinBound,
  type DeviceHolder,
  type DisplaceOutcome,
  type DisplaceRequest,
  type KickRequest,
  type Logger,
} from '@seqline/core';

/** What every round needs of its bus, whatever the transport. */
export interface DeviceRoundContext {
  logger: Logger;
  holder: DeviceHolder;
  /** How long the login waits for the answers of the peers it expects (of all, when unknown). */
  answerWaitMs: number;
  /** The longest the login waits in all; answers until then are still acted on. */
  maxWaitMs: number;
  /** Records that `login` asked to kick `sessions` (see core's sparedInCrossing). */
  asked(login: string, sessions: readonly string[]): void;
  /** The round stopped listening (everything answered where nobody else can, at maxWaitMs, or stopped). */
  onEnd(): void;
}

export interface PeerRoundContext<Peer> extends DeviceRoundContext {
  /** What a peer is, in log lines: `gateway`, `thread`. */
  peerNoun: string;
  /** The peers that may hold the user, as presence says; undefined while it cannot be trusted. */
  expected: ReadonlySet<Peer> | undefined;
  /**
   * Only the expected peers can answer (ports): the round stops listening once they all answered
   * and told. Otherwise (a subject anyone holding the user answers) it listens until maxWaitMs.
   */
  onlyExpectedAnswer: boolean;
}

export interface DeviceRound {
  outcome: Promise<DisplaceOutcome>;
  /** Stops listening (the bus closes); the outcome settles at once. */
  readonly stop: () => void;
}

/** Where a transport hands the answers of the peers. */
export interface RoundAnswers<Peer> {
  /** `peer` picked `sessions` (the first step); a replayed answer is ignored. */
  picked(peer: Peer, sessions: readonly string[]): void;
  /** `peer` kicked what it was asked to, and told its sessions (or `failed` to). */
  told(peer: Peer, failed: boolean): void;
  /** Asking `peer` failed; `gone`: it went, and its sessions with it (nothing left to displace). */
  unanswered(peer: Peer, step: 'pick' | 'kick', err: unknown, gone: boolean): void;
}

/** How a round reaches the peers. */
export interface RoundTransport<Peer> {
  /** Asks the peers to pick; their answers go to `answers`. Throws when the bus is unreachable. */
  askPick(answers: RoundAnswers<Peer>): void;
  /** Asks `peer` to kick; its answer goes to `answers`. Throws when the kick cannot be sent. */
  askKick(peer: Peer, kick: KickRequest, answers: RoundAnswers<Peer>): void;
  /** Stops listening for answers: the round ended. */
  unlisten(): void;
}

const RANK: Record<DisplaceOutcome, number> = { told: 0, bound: 1, failed: 2 };
const worst = (a: DisplaceOutcome, b: DisplaceOutcome): DisplaceOutcome => (RANK[a] >= RANK[b] ? a : b);

export function startDeviceRound<Peer>(
  ctx: PeerRoundContext<Peer>,
  request: DisplaceRequest,
  transport: RoundTransport<Peer>,
): DeviceRound {
  const here = withinBound(displaceHere(ctx.holder, request, ctx.logger), ctx.maxWaitMs).then((outcome) => {
    if (outcome === 'bound')
      ctx.logger.warn(
        { tenant: request.tenant, user: request.user, maxWaitMs: ctx.maxWaitMs },
        'displaced sessions here not told within the bound',
      );
    return outcome;
  }); // first: no message
  const others = askOthers(ctx, request, transport);
  return { outcome: Promise.all([here, others.outcome]).then(([a, b]) => worst(a, b)), stop: others.stop };
}

function askOthers<Peer>(ctx: PeerRoundContext<Peer>, request: DisplaceRequest, transport: RoundTransport<Peer>): DeviceRound {
  const { tenant, user, incoming } = request;
  const log = ctx.logger.child({ tenant, user, login: incoming.session });
  const noun = ctx.peerNoun;
  const answered = new Set<Peer>();
  const kicking = new Set<Peer>();
  let [answerWindowOver, failed, settled, stopped] = [false, false, false, false];
  let answerTimer: ReturnType<typeof setTimeout> | undefined;
  let maxTimer: ReturnType<typeof setTimeout> | undefined;
  let settle: (outcome: DisplaceOutcome) => void = () => undefined;
  const outcome = new Promise<DisplaceOutcome>((resolve) => (settle = resolve));
  const finish = (result: DisplaceOutcome) => {
    if (settled) return;
    settled = true;
    settle(result);
  };
  const missing = () => [...(ctx.expected ?? [])].filter((peer) => !answered.has(peer));

  const check = () => {
    const allAnswered = ctx.expected !== undefined && missing().length === 0;
    if (allAnswered && kicking.size === 0 && ctx.onlyExpectedAnswer) stop(false);
    if (settled || kicking.size > 0) return;
    if (allAnswered) return finish(failed ? 'failed' : 'told');
    if (!answerWindowOver) return;
    if (ctx.expected === undefined) return finish(failed ? 'failed' : 'told');
    log.warn({ missing: missing(), answerWaitMs: ctx.answerWaitMs }, `login served before every ${noun} answered (bound)`);
    finish('bound');
  };

  const sendKick = (peer: Peer, sessions: readonly string[]) => {
    // A login displaced meanwhile displaces nobody: of two racing logins one stays.
    if (!ctx.holder.list(tenant, user).some((s) => s.session === incoming.session))
      return log.debug({ [noun]: peer, sessions: sessions.length }, 'login no longer live: nothing kicked');
    ctx.asked(incoming.session, sessions);
    kicking.add(peer);
    try {
      transport.askKick(peer, { tenant, user, incoming, sessions }, answers);
    } catch (err) {
      kicking.delete(peer);
      failed = true;
      log.warn({ err, [noun]: peer }, 'kick not sent');
    }
  };

  const answers: RoundAnswers<Peer> = {
    picked(peer, sessions) {
      if (stopped || answered.has(peer)) return; // a replayed answer asks nothing twice
      answered.add(peer);
      if (sessions.length > 0) {
        if (settled) log.info({ [noun]: peer }, 'late answer: kicked after the login was served');
        sendKick(peer, sessions);
      }
      check();
    },
    told(peer, failedThere) {
      if (stopped) return;
      kicking.delete(peer);
      if (failedThere) failed = true;
      check();
    },
    unanswered(peer, step, err, gone) {
      if (stopped) return;
      if (step === 'pick') answered.add(peer);
      else kicking.delete(peer);
      if (gone) log.info({ [noun]: peer }, `${step}: the ${noun} is gone, and its sessions with it`);
      else {
        failed = true;
        log.warn({ err, [noun]: peer }, `${step} failed`);
      }
      check();
    },
  };

  /** `bounded`: the round ends before everything was answered (maxWaitMs, or the bus closing). */
  function stop(bounded: boolean): void {
    if (stopped) return;
    stopped = true;
    clearTimeout(answerTimer);
    clearTimeout(maxTimer);
    transport.unlisten();
    ctx.onEnd();
    if (bounded && !settled)
      log.warn(
        { missing: missing(), kicking: [...kicking], maxWaitMs: ctx.maxWaitMs },
        'login served before every displaced session was told (bound)',
      );
    if (bounded) finish('bound');
  }

  try {
    transport.askPick(answers);
  } catch (err) {
    stopped = true;
    transport.unlisten();
    log.warn({ err }, `device bus unreachable: only the sessions on this ${noun} were displaced`);
    ctx.onEnd();
    return { outcome: Promise.resolve('failed'), stop: () => undefined };
  }
  answerTimer = setTimeout(() => {
    answerWindowOver = true;
    check();
  }, ctx.answerWaitMs);
  // Until then late answers are still acted on (kicked), though no longer waited for.
  maxTimer = setTimeout(() => stop(true), ctx.maxWaitMs);
  check(); // nobody else may hold the user: served at once
  return { outcome, stop: () => stop(true) };
}
