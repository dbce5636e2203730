/** Builds an InboxOwner on the test doubles; entry builders. */
import { inboxKey } from '@seqline/core';
import type { Clock, InboxKey, NewEntry, SeqCeilingStore, TimelineStore } from '@seqline/core';
import { InboxOwner } from '../src/index.ts';
import type { InboxOwnerOptions } from '../src/index.ts';
import { FakeCeilingStore, FakeTimelineStore, MemoryLogger, RecordingPushBus } from './fakes.ts';

export interface Rig {
  timeline: FakeTimelineStore;
  ceilings: FakeCeilingStore;
  push: RecordingPushBus;
  logger: MemoryLogger;
  owner(epoch: number, extra?: Partial<InboxOwnerOptions>): InboxOwner;
}

export function rig(): Rig {
  const timeline = new FakeTimelineStore();
  const ceilings = new FakeCeilingStore();
  const push = new RecordingPushBus();
  const logger = new MemoryLogger();
  return {
    timeline,
    ceilings,
    push,
    logger,
    owner: (epoch, extra = {}) => ownerOn({ timeline, ceilings, push, logger, epoch, ...extra }),
  };
}

export function ownerOn(
  options: Partial<InboxOwnerOptions> & {
    timeline: TimelineStore;
    ceilings: SeqCeilingStore;
    epoch: number;
  },
): InboxOwner {
  return new InboxOwner({
    push: new RecordingPushBus(),
    logger: new MemoryLogger(),
    shardCount: 4,
    ...options,
  });
}

let counter = 0;

export function msg(from: string, text: string, appinfo = `app-${++counter}-${text}`): NewEntry {
  return { kind: 'msg', appinfo, conv: { type: 'user', id: from }, from, sendTime: 1_700_000_000_000, type: 'text', body: { text } };
}

export const inbox = (user: string): InboxKey => inboxKey('t1', user);

export class ManualClock implements Clock {
  constructor(public t = 1_700_000_000_000) {}
  now(): number {
    return this.t;
  }
}
