/**
 * A listing over the device bus: the other gateways' live sessions of one user. It ends when
 * every gateway presence names answered, or after `waitMs` (all answers when presence is not
 * trusted, or one of them is silent).
 */
import { createInbox, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { DeviceSession, Logger } from '@seqline/core';
import { parseReply } from './nats-device-messages.ts';

export interface ListContext {
  nc: NatsConnection;
  logger: Logger;
  self: string;
  subject: string;
  body: object;
  expected: ReadonlySet<string> | undefined;
  waitMs: number;
}

export function gatherList(ctx: ListContext): Promise<DeviceSession[]> {
  if (ctx.expected?.size === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    const byBus = new Map<string, DeviceSession[]>();
    let sub: Subscription | undefined;
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      sub?.unsubscribe();
      resolve([...byBus.values()].flat());
    };
    try {
      const inbox = createInbox();
      sub = ctx.nc.subscribe(inbox, {
        callback: (err, msg) => {
          const reply = err === null ? parseReply(msg) : null;
          if (reply?.step !== 'listed' || reply.from === ctx.self) return;
          byBus.set(reply.from, reply.sessions);
          if (ctx.expected !== undefined && [...ctx.expected].every((bus) => byBus.has(bus))) finish();
        },
      });
      ctx.nc.publish(ctx.subject, JSON.stringify(ctx.body), { reply: inbox });
    } catch (err) {
      ctx.logger.warn({ err, subject: ctx.subject }, 'device bus unreachable: listing this gateway only');
      return finish();
    }
    timer = setTimeout(finish, ctx.waitMs);
  });
}
