import { inboxKey } from '@seqline/core';
import type { Messaging } from './api.ts';
import { KeyedLock, type MessagingContext } from './context.ts';
import type { MessagingDeps } from './deps.ts';
import { changeMembers, createGroup, groupInfo } from './groups.ts';
import { groupAck, groupHistory, groupReaders } from './group-stream-ops.ts';
import { createShedder, InFlightCounter, processLoopLagMs } from './load.ts';
import { send } from './send.ts';
import { history, read, recall, sync } from './timeline-ops.ts';

/** The application service behind every gateway op; stateless over its ports. */
export function createMessaging(deps: MessagingDeps): Messaging {
  const inFlight = new InFlightCounter();
  const d: MessagingContext = {
    ...deps,
    inFlight,
    shedder: createShedder(inFlight, deps.loopLagMs ?? processLoopLagMs, deps.sheddingPolicy),
    membershipLocks: new KeyedLock(),
  };
  return {
    send: (c, input) => send(d, c, input),
    sync: (c, maxSeq, limit) => sync(d, c, maxSeq, limit),
    history: (c, beforeSeq, limit) => history(d, c, beforeSeq, limit),
    read: (c, seqs) => read(d, c, seqs),
    recall: (c, appinfo) => recall(d, c, appinfo),
    createGroup: (c, input) => createGroup(d, c, input),
    addMembers: (c, id, members) => changeMembers(d, c, id, members, 'add'),
    removeMembers: (c, id, members) => changeMembers(d, c, id, members, 'remove'),
    groupInfo: (c, id) => groupInfo(d, c, id),
    groupHistory: (c, input) => groupHistory(d, c, input),
    groupAck: (c, id, gseq) => groupAck(d, c, id, gseq),
    groupReaders: (c, input) => groupReaders(d, c, input),
    subscribe: (c, onPush) => d.push.subscribe(inboxKey(c.tenant, c.user), onPush),
  };
}
