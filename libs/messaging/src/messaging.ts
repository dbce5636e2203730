import { inboxKey } from '@seqline/core';
import type { Messaging } from './api.ts';
import type { MessagingDeps } from './deps.ts';
import { changeMembers, createGroup, groupInfo } from './groups.ts';
import { groupAck, groupHistory } from './group-stream-ops.ts';
import { send } from './send.ts';
import { history, read, recall, sync } from './timeline-ops.ts';

/** The application service behind every gateway op; stateless over its ports. */
export function createMessaging(d: MessagingDeps): Messaging {
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
    subscribe: (c, onPush) => d.push.subscribe(inboxKey(c.tenant, c.user), onPush),
  };
}
