/**
 * One login's displacement, as its gateway runs it over the NATS device bus (nats-device-bus.ts):
 * the round of device-round.ts, its pick asked once on the user's subject (every gateway holding
 * the user answers, presence names those waited for), its kicks on each gateway's own subject,
 * every answer to one inbox of the round.
 */
import { createInbox, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { DisplaceRequest } from '@seqline/core';
import { startDeviceRound, type DeviceRound, type DeviceRoundContext } from './device-round.ts';
import { parseReply } from './nats-device-messages.ts';

export interface RoundContext extends DeviceRoundContext {
  nc: NatsConnection;
  /** This bus's id: its presence id and `from` of what it sends. */
  self: string;
  userSubject: string;
  kickSubjectOf(bus: string): string;
  /** The other buses that hold the user, as presence says; undefined while it cannot be trusted. */
  expected: ReadonlySet<string> | undefined;
}

export type Round = DeviceRound;

export function startRound(ctx: RoundContext, request: DisplaceRequest): Round {
  const { nc, self } = ctx;
  const inbox = createInbox();
  let sub: Subscription | undefined;
  // Anyone holding the user may answer on the subject: the round listens until maxWaitMs.
  return startDeviceRound({ ...ctx, peerNoun: 'gateway', onlyExpectedAnswer: false }, request, {
    askPick(answers) {
      sub = nc.subscribe(inbox, {
        callback: (err, msg) => {
          const reply = err === null ? parseReply(msg) : null;
          if (reply === null || reply.from === self) return;
          if (reply.step === 'picked') answers.picked(reply.from, reply.sessions);
          else if (reply.step === 'told') answers.told(reply.from, reply.failed);
        },
      });
      nc.publish(ctx.userSubject, JSON.stringify({ op: 'pick', from: self, ...request }), { reply: inbox });
    },
    askKick(bus, kick) {
      nc.publish(ctx.kickSubjectOf(bus), JSON.stringify({ from: self, ...kick }), { reply: inbox });
    },
    unlisten() {
      try {
        sub?.unsubscribe();
      } catch {
        // The connection is gone: so is the subscription.
      }
    },
  });
}
