/**
 * One login's displacement across the threads of a process (threads-device-bus.ts): the round of
 * device-round.ts, every thread asked by request over its port. Ports lose nothing, so the login
 * waits, by count within its bounds, for the threads that may hold the user; the others' answers
 * are acted on until the round's end; a thread gone meanwhile took its sessions with it and
 * counts as told.
 */
import type { DisplaceRequest } from '@seqline/core';
import { startDeviceRound, type DeviceRound, type DeviceRoundContext } from './device-round.ts';
import type { ThreadChannel } from './threads-channel.ts';
import { ThreadUnavailableError } from './threads-frames.ts';

export interface ThreadRoundContext extends DeviceRoundContext {
  channel: ThreadChannel;
  /** The other threads to ask: every live one (threads-device-bus.ts). */
  ask: readonly number[];
  /** Of those, the ones the login waits for: presence says they hold the user, or it does not know them yet. */
  expect: readonly number[];
}

export type ThreadRound = DeviceRound;

/** What a thread answers to a kick. */
export interface KickAnswer {
  displaced: number;
  failed: boolean;
}

export function startThreadRound(ctx: ThreadRoundContext, request: DisplaceRequest): ThreadRound {
  const { channel } = ctx;
  const gone = (err: unknown) => err instanceof ThreadUnavailableError;
  // Every thread is asked, the expected ones waited for; one that presence did not count yet (a
  // session it opened a moment ago) still answers, and its session is kicked, if after the login.
  return startDeviceRound({ ...ctx, peerNoun: 'thread', expected: new Set(ctx.expect), onlyExpectedAnswer: false }, request, {
    askPick(answers) {
      for (const thread of ctx.ask)
        channel.request(thread, { op: 'pick', displace: request }).then(
          (sessions) => answers.picked(thread, isIds(sessions) ? sessions : []),
          (err: unknown) => answers.unanswered(thread, 'pick', err, gone(err)),
        );
    },
    askKick(thread, kick, answers) {
      channel.request(thread, { op: 'kick', kick }).then(
        (answer) => answers.told(thread, (answer as KickAnswer | null)?.failed !== false),
        (err: unknown) => answers.unanswered(thread, 'kick', err, gone(err)),
      );
    },
    unlisten: () => undefined, // each answer is to a request of the round: those after its end are ignored
  });
}

function isIds(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((s) => typeof s === 'string');
}
